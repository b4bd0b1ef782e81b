/**
 * Template variables in subjects and bodies: `{{firstName}}`, `{{companyName}}`, any custom key, and a
 * fallback `{{firstName | there}}`. Parsed when a variant is saved, so a typo is a 400 naming the field
 * instead of a broken email at send time.
 */

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
  const variables: string[] = [];
  const at = (i: number) => `at character ${i + 1}`;
  let i = 0;
  for (;;) {
    const open = text.indexOf('{{', i);
    const close = text.indexOf('}}', i);
    if (open === -1 && close === -1) return { ok: true, variables };
    if (close !== -1 && (open === -1 || close < open)) {
      const before = /\{([^{}]*)$/.exec(text.slice(i, close));
      if (before && VARIABLE_NAME.test(before[1].split('|')[0].trim())) {
        return { ok: false, error: `"}}" ${at(close)} closes a single "{": write {{${before[1].trim()}}}.` };
      }
      i = close + 2;
      continue;
    }
    if (text[open + 2] === '{') return { ok: false, error: `"{{{" ${at(open)}: variables use exactly two braces, {{name}}.` };
    const end = text.indexOf('}}', open + 2);
    const nextOpen = text.indexOf('{{', open + 2);
    if (end === -1 || (nextOpen !== -1 && nextOpen < end)) return { ok: false, error: `"{{" ${at(open)} is never closed with "}}".` };
    const inner = text.slice(open + 2, end);
    const parts = inner.split('|');
    const name = parts[0].trim();
    if (!name) return { ok: false, error: `Empty variable "{{${inner}}}" ${at(open)}.` };
    if (!VARIABLE_NAME.test(name)) {
      return { ok: false, error: `"{{${inner}}}" ${at(open)}: "${name}" is not a variable name (letters, digits, _, - and ., starting with a letter or _).` };
    }
    if (parts.length > 2) return { ok: false, error: `"{{${inner}}}" ${at(open)}: a variable takes at most one "|" fallback.` };
    if (parts.length === 2) {
      const fallback = parts[1].trim();
      if (!fallback) return { ok: false, error: `"{{${inner}}}" ${at(open)}: the fallback after "|" is empty.` };
      if (/[{}]/.test(fallback) || fallback.length > MAX_FALLBACK) {
        return { ok: false, error: `"{{${inner}}}" ${at(open)}: the fallback must be plain text of at most ${MAX_FALLBACK} characters.` };
      }
    }
    if (!variables.includes(name)) variables.push(name);
    i = end + 2;
  }
}

/** The variables of a variant, subject first. Only called on saved (already valid) text. */
export function variantVariables(subject: string, body: string): string[] {
  const names: string[] = [];
  for (const text of [subject, body]) {
    const parsed = parseTemplate(text);
    if (parsed.ok) for (const name of parsed.variables) if (!names.includes(name)) names.push(name);
  }
  return names;
}
