/**
 * A uPlot chart of named series, redrawn when the data changes and resized with its box.
 */
import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

const COLOURS = ['#2563eb', '#16a34a', '#d97706', '#dc2626', '#7c3aed', '#0891b2'];

type ChartProps = { title: string; series: { label: string; values: number[] }[] } & (
  { days: readonly string[]; categories?: never } | { categories: readonly string[]; days?: never }
);

type NumberKeys<T> = { [K in keyof T]: T[K] extends number ? K : never }[keyof T];

/** A daily graph as the API answers it (one object a day, with its `date`) as lines by label: `{ Sent: 'sent' }`. */
export function dailySeries<Day extends { date: string }>(
  graph: readonly Day[],
  lines: Record<string, NumberKeys<Day>>,
) {
  return {
    days: graph.map((d) => d.date),
    series: Object.entries(lines).map(([label, key]) => ({ label, values: graph.map((d) => d[key] as number) })),
  };
}

/** Lines over days (ISO dates), or bars over named categories. */
export function Chart({ title, series, days, categories }: ChartProps) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = box.current;
    if (!element) return;
    const widthOf = () => Math.max(240, Math.min(element.clientWidth || 600, 900));
    const x = days ? days.map((d) => Date.parse(`${d}T00:00:00Z`) / 1000) : categories.map((_, i) => i);
    const positions = () => categories?.map((_, i) => i) ?? [];
    const plot = new uPlot(
      {
        width: widthOf(),
        height: 220,
        scales: { x: days ? { time: true } : { time: false, range: [-0.5, categories.length - 0.5] } },
        series: [
          {},
          ...series.map((s, i) => ({
            label: s.label,
            stroke: COLOURS[i % COLOURS.length],
            fill: categories ? `${COLOURS[i % COLOURS.length]}55` : undefined,
            paths: categories ? uPlot.paths.bars!({ size: [0.6, 80] }) : undefined,
          })),
        ],
        axes: [
          categories ? { splits: positions, values: (_u, splits) => splits.map((i) => categories[i] ?? '') } : {},
          { size: 50 },
        ],
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
  }, [series, days, categories]);
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
