import { checkSpintax, spin } from '../../server/text/spintax';

describe('spintax', () => {
  it('renders the same text for the same key, and every alternative across keys about evenly', () => {
    const text = '{Hi|Hello|Hey} there';
    expect(spin(text, 'contact-1:step-1:body')).toBe(spin(text, 'contact-1:step-1:body'));
    const counts = new Map<string, number>();
    for (let i = 0; i < 3000; i += 1) {
      const out = spin(text, `contact-${i}:step-1:body`);
      counts.set(out, (counts.get(out) ?? 0) + 1);
    }
    expect([...counts.keys()].sort()).toEqual(['Hello there', 'Hey there', 'Hi there']);
    for (const n of counts.values()) expect(n).toBeGreaterThan(800);
  });

  it('nests groups, keeps variables and escaped characters, and leaves braces without "|" as written', () => {
    expect(spin('{a|{b|c}}', 'k')).toMatch(/^(a|b|c)$/);
    expect(spin('{{firstName}} {x|{{lastName}}}', 'k')).toMatch(/^\{\{firstName\}\} (x|\{\{lastName\}\})$/);
    expect(spin('\\{not\\|spun\\}', 'k')).toBe('{not|spun}');
    expect(spin('p{color:red} a{b{c:d}}', 'k')).toBe('p{color:red} a{b{c:d}}');
    expect(spin('no braces at all', 'k')).toBe('no braces at all');
  });

  it('checks balance with the position, and never fails when rendering an old unbalanced template', () => {
    expect(checkSpintax('{a|b}')).toMatchObject({ ok: true });
    expect(checkSpintax('x {a|b')).toEqual({ ok: false, error: '"{" at character 3 is never closed with "}".' });
    expect(checkSpintax('a}')).toMatchObject({ ok: false, error: expect.stringContaining('at character 2') as string });
    expect(checkSpintax('{a|'.repeat(9) + 'b' + '}'.repeat(9))).toMatchObject({ ok: false });
    expect(checkSpintax('{a|'.repeat(8) + 'b' + '}'.repeat(8))).toMatchObject({ ok: true });
    // What the template checker reads: spintax's own characters blanked, positions kept.
    expect(checkSpintax('{Hi|{{firstName}}} \\{x')).toEqual({ ok: true, flat: ' Hi {{firstName}}    x' });
    expect(spin('old {a|b text', 'k')).toBe('old {a|b text');
    expect(spin('old a} text', 'k')).toBe('old a} text');
  });

  it('is linear: a 50,000-character template with deep and long groups checks and renders at once', () => {
    const big = '{a|b} '.repeat(8000) + '{x|'.repeat(8) + 'y' + '}'.repeat(8);
    const started = process.hrtime.bigint();
    expect(checkSpintax(big)).toMatchObject({ ok: true });
    expect(spin(big, 'k').length).toBeGreaterThan(8000);
    expect(Number(process.hrtime.bigint() - started) / 1e6).toBeLessThan(2000);
  });
});
