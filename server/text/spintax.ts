/**
 * Spintax: `{Hi|Hello|Hey}` picks one alternative, groups nest, `\{` `\}` `\|` write the character itself.
 * Braces with no `|` between them are kept as written (CSS in an HTML body), and `{{name}}` template variables
 * pass through untouched for the template renderer. A template is checked when saved (`checkSpintax`); `spin`
 * never fails, so a template saved before spintax existed still sends as it always did.
 */

export const MAX_SPINTAX_DEPTH = 8;

type Node = string | Node[][];

/**
 * `flat` is the text with spintax's own characters (a group's braces and bars, an escape's backslash and
 * character) turned into spaces, same length: what the template checker reads, so a variable inside an
 * alternative is checked and a group's closing `}}` is not taken for a variable's.
 */
export type SpintaxCheck = { ok: true; flat: string } | { ok: false; error: string };

/** A template variable at `i`: `{{`, no brace, `}}`. */
const VARIABLE = /\{\{[^{}]*\}\}/y;

class Unbalanced extends Error {}

/**
 * Parses `text` into literal strings and groups (a group is a list of alternatives, each a list of nodes).
 * One pass, linear in the text; `strict` turns an unmatched brace or a too-deep group into an error.
 */
function parse(text: string, strict: boolean, syntax: number[] = []): Node[] {
  let i = 0;
  const at = (pos: number) => `at character ${pos + 1}`;
  const sequence = (depth: number): { nodes: Node[]; closedBy: '|' | '}' | null } => {
    const nodes: Node[] = [];
    let literal = '';
    while (i < text.length) {
      const c = text[i];
      VARIABLE.lastIndex = i;
      if (c === '\\' && (text[i + 1] === '{' || text[i + 1] === '}' || text[i + 1] === '|')) {
        literal += text[i + 1];
        syntax.push(i, i + 1);
        i += 2;
      } else if (c === '{' && VARIABLE.test(text)) {
        // A template variable, kept whole for the template renderer.
        literal += text.slice(i, VARIABLE.lastIndex);
        i = VARIABLE.lastIndex;
      } else if (c === '{') {
        const open = i;
        if (depth >= MAX_SPINTAX_DEPTH && strict) {
          throw new Unbalanced(`"{" ${at(open)}: spintax groups nest at most ${MAX_SPINTAX_DEPTH} deep.`);
        }
        i += 1;
        const alternatives: Node[][] = [];
        const delimiters = [open];
        for (;;) {
          const part = sequence(depth + 1);
          alternatives.push(part.nodes);
          delimiters.push(i - 1);
          if (part.closedBy === '|') continue;
          if (part.closedBy === null) {
            if (strict) throw new Unbalanced(`"{" ${at(open)} is never closed with "}".`);
            // Lenient: an unclosed brace is text.
            nodes.push(literal + '{', ...alternatives.flatMap((a, n) => (n ? ['|', ...a] : a)));
            return { nodes, closedBy: null };
          }
          break;
        }
        if (alternatives.length === 1) {
          // No "|": the braces are text (CSS, JSON), their inside still spun.
          literal += '{';
          nodes.push(literal, ...alternatives[0], '}');
          literal = '';
        } else {
          if (literal) nodes.push(literal);
          literal = '';
          nodes.push(alternatives);
          syntax.push(...delimiters);
        }
      } else if ((c === '|' || c === '}') && depth > 0) {
        i += 1;
        if (literal) nodes.push(literal);
        return { nodes, closedBy: c };
      } else if (c === '}' && strict) {
        throw new Unbalanced(`"}" ${at(i)} closes no "{" (write \\} for the character itself).`);
      } else {
        literal += c;
        i += 1;
      }
    }
    if (literal) nodes.push(literal);
    return { nodes, closedBy: null };
  };
  return sequence(0).nodes;
}

/** Whether a template's spintax is well formed, with the position of the first problem. */
export function checkSpintax(text: string): SpintaxCheck {
  const syntax: number[] = [];
  try {
    parse(text, true, syntax);
    const flat = text.split('');
    for (const at of syntax) flat[at] = ' ';
    return { ok: true, flat: flat.join('') };
  } catch (e) {
    if (e instanceof Unbalanced) return { ok: false, error: e.message };
    throw e;
  }
}

/** FNV-1a: cheap and stable across processes and releases, so a pick never changes between renders. */
function hash(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i += 1) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

/**
 * The text with each group replaced by one of its alternatives, picked by `key` (contact, step and field) and
 * the group's place in the text: the same key always renders the same text.
 */
export function spin(text: string, key: string): string {
  if (!text.includes('{') && !text.includes('\\')) return text;
  let group = 0;
  const render = (nodes: Node[]): string => {
    let out = '';
    for (const node of nodes) {
      if (typeof node === 'string') {
        out += node;
        continue;
      }
      group += 1;
      out += render(node[hash(`${key}#${group}`) % node.length]);
    }
    return out;
  };
  return render(parse(text, false));
}
