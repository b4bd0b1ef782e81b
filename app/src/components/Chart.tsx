/**
 * A uPlot chart: one x series (days as Unix seconds, or positions) and named y series, redrawn when the data
 * changes and resized with its box.
 */
import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

const COLOURS = ['#2563eb', '#16a34a', '#d97706', '#dc2626', '#7c3aed', '#0891b2'];

export function Chart({
  title,
  x,
  series,
  bars = false,
  time = true,
}: {
  title: string;
  x: number[];
  series: { label: string; values: number[] }[];
  bars?: boolean;
  time?: boolean;
}) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = box.current;
    if (!element) return;
    const widthOf = () => Math.max(240, Math.min(element.clientWidth || 600, 900));
    const plot = new uPlot(
      {
        width: widthOf(),
        height: 220,
        scales: { x: { time } },
        series: [
          {},
          ...series.map((s, i) => ({
            label: s.label,
            stroke: COLOURS[i % COLOURS.length],
            fill: bars ? `${COLOURS[i % COLOURS.length]}55` : undefined,
            paths: bars ? uPlot.paths.bars!({ size: [0.6, 60] }) : undefined,
          })),
        ],
        axes: [{}, { size: 50 }],
      },
      [x, ...series.map((s) => s.values)],
      element,
    );
    // The chart follows its box's width (a phone held sideways, a narrower window).
    const resized = new ResizeObserver(() => plot.setSize({ width: widthOf(), height: 220 }));
    resized.observe(element);
    return () => {
      resized.disconnect();
      plot.destroy();
    };
  }, [x, series, bars, time]);
  return (
    <figure className="chart">
      <figcaption>{title}</figcaption>
      <div
        ref={box}
        role="img"
        aria-label={`${title}: ${series.map((s) => `${s.label} ${s.values.reduce((a, b) => a + b, 0)}`).join(', ')}`}
      />
    </figure>
  );
}
