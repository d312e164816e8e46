// What the code-style test checks the sources for, as functions of file texts so the checks
// themselves can be shown to fail on a small example.
import * as tsPlugin from 'prettier/plugins/typescript';

const EXPORT =
  /^export\s+(?:declare\s+)?(?:async\s+)?(?:const|let|function\*?|class|abstract\s+class|type|interface|enum)\s+([A-Za-z_$][\w$]*)/gm;
const WORD = /[A-Za-z_$][\w$]*/g;

/**
 * Exports no other file names: an export is for other modules, so one used only in its own file
 * (or not at all) is a needless door into it. A word match, not a type check: a name mentioned
 * anywhere else (an import, a comment) counts as used, so the check never calls a live export dead.
 */
export function deadExports(files: Map<string, string>): string[] {
  const words = new Map<string, Set<string>>();
  for (const [file, text] of files) for (const w of new Set(text.match(WORD) ?? [])) words.set(w, (words.get(w) ?? new Set()).add(file));
  const dead: string[] = [];
  for (const [file, text] of files) {
    for (const m of text.matchAll(EXPORT)) if (words.get(m[1]!)!.size === 1) dead.push(`${file}: ${m[1]}`);
  }
  return dead;
}

const FUNCTIONS = new Set(['FunctionDeclaration', 'FunctionExpression', 'ArrowFunctionExpression']);

interface Node {
  type: string;
  loc?: { start: { line: number }; end: { line: number } };
  [key: string]: unknown;
}

/** Every function (declared, expression or arrow) longer than `max` lines, as "file:line (N lines)". */
export async function longFunctions(file: string, text: string, max: number): Promise<string[]> {
  const parser = (tsPlugin as unknown as { parsers: { typescript: { parse(t: string, o: object): Promise<Node> | Node } } }).parsers;
  const ast = await parser.typescript.parse(text, {});
  const long: string[] = [];
  const walk = (n: Node): void => {
    if (FUNCTIONS.has(n.type) && n.loc) {
      const lines = n.loc.end.line - n.loc.start.line + 1;
      if (lines > max) long.push(`${file}:${n.loc.start.line} (${lines} lines)`);
    }
    for (const [k, v] of Object.entries(n)) {
      if (k === 'loc' || k === 'range' || !v || typeof v !== 'object') continue;
      for (const c of Array.isArray(v) ? v : [v]) if (c && typeof (c as Node).type === 'string') walk(c as Node);
    }
  };
  walk(ast);
  return long;
}
