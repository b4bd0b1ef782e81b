/**
 * Template variables in subjects and bodies: `{{firstName}}`, `{{companyName}}`, any custom key, and a
 * fallback `{{firstName | there}}`. Parsed when a variant is saved, so a typo is a 400 naming the field
 * instead of a broken email at send time.
 */
import { checkSpintax } from '../../text/spintax';

/** A variable name: a built-in (firstName, ...) or a custom contact variable key. */
const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_.-]{0,63}$/;
const MAX_FALLBACK = 100;

export type TemplateResult = { ok: true; variables: string[] } | { ok: false; error: string };

/**
 * Returns the variables `text` uses (each once, in order of first use) or the first problem.
 * A lone `}}` is only an error when it closes what looks like a variable (`{firstName}}`): HTML
 * bodies may carry CSS, where `}}` closes nested rules.
 */
export function parseTemplate(text: string): TemplateResult {
  const variables = new Set<string>();
  const at = (i: number) => `at character ${i + 1}`;
  // Every search moves forward only (a position is looked up again only once the scan has passed it),
  // so the whole parse is linear in the text, whatever it holds.
  let i = 0;
  let open = text.indexOf('{{');
  let close = text.indexOf('}}');
  let single = text.indexOf('{');
  for (;;) {
    if (open !== -1 && open < i) open = text.indexOf('{{', i);
    if (close !== -1 && close < i) close = text.indexOf('}}', i);
    if (open === -1 && close === -1) return { ok: true, variables: [...variables] };
    if (close !== -1 && (open === -1 || close < open)) {
      // A "}}" closing what looks like a variable opened with a single "{".
      // The last "{" in [i, close), found by moving the cached next "{" forward.
      if (single !== -1 && single < i) single = text.indexOf('{', i);
      let brace = -1;
      while (single !== -1 && single < close) {
        brace = single;
        single = text.indexOf('{', single + 1);
      }
      if (brace !== -1 && text.indexOf('}', brace) === close) {
        const inner = text.slice(brace + 1, close);
        if (VARIABLE_NAME.test(inner.split('|')[0].trim())) {
          return { ok: false, error: `"}}" ${at(close)} closes a single "{": write {{${inner.trim()}}}.` };
        }
      }
      i = close + 2;
      continue;
    }
    if (text[open + 2] === '{')
      return { ok: false, error: `"{{{" ${at(open)}: variables use exactly two braces, {{name}}.` };
    const end = text.indexOf('}}', open + 2);
    if (end === -1) return { ok: false, error: `"{{" ${at(open)} is never closed with "}}".` };
    const inner = text.slice(open + 2, end);
    if (inner.includes('{{')) return { ok: false, error: `"{{" ${at(open)} is never closed with "}}".` };
    const parts = inner.split('|');
    const name = parts[0].trim();
    if (!name) return { ok: false, error: `Empty variable "{{${inner}}}" ${at(open)}.` };
    if (!VARIABLE_NAME.test(name)) {
      return {
        ok: false,
        error: `"{{${inner}}}" ${at(open)}: "${name}" is not a variable name (letters, digits, _, - and ., starting with a letter or _).`,
      };
    }
    if (parts.length > 2)
      return { ok: false, error: `"{{${inner}}}" ${at(open)}: a variable takes at most one "|" fallback.` };
    if (parts.length === 2) {
      const fallback = parts[1].trim();
      if (!fallback) return { ok: false, error: `"{{${inner}}}" ${at(open)}: the fallback after "|" is empty.` };
      if (/[{}]/.test(fallback) || fallback.length > MAX_FALLBACK) {
        return {
          ok: false,
          error: `"{{${inner}}}" ${at(open)}: the fallback must be plain text of at most ${MAX_FALLBACK} characters.`,
        };
      }
    }
    variables.add(name);
    i = end + 2;
  }
}

/**
 * A subject or body as saved: its spintax balanced, then its variables read with spintax's own characters blanked
 * (so `{Hi|{{firstName}}}` is a variable inside a group, and a group's closing `}}` is no variable's).
 */
export function parseVariantText(
  text: string,
): { ok: true; variables: string[] } | { ok: false; error: string; code: 'template' | 'spintax' } {
  const spintax = checkSpintax(text);
  if (!spintax.ok) {
    // Both checkers name the character they stopped at: the first problem in the text is the one to fix.
    const raw = parseTemplate(text);
    const position = (error: string) => Number(/at character (\d+)/.exec(error)?.[1] ?? Infinity);
    return !raw.ok && position(raw.error) <= position(spintax.error)
      ? { ...raw, code: 'template' }
      : { ok: false, error: spintax.error, code: 'spintax' };
  }
  const parsed = parseTemplate(spintax.flat);
  return parsed.ok ? parsed : { ...parsed, code: 'template' };
}

/** The variables of a variant, subject first. Only called on saved (already valid) text. */
export function variantVariables(subject: string, body: string): string[] {
  // A Set keeps the order of first use in linear time (a body may hold thousands of distinct variables).
  const names = new Set<string>();
  for (const text of [subject, body]) {
    const parsed = parseVariantText(text);
    if (parsed.ok) for (const name of parsed.variables) names.add(name);
  }
  return [...names];
}
