/**
 * A small Python tokenizer for the renderer's source pane (kernels are short
 * Python functions; JupyterLab's own Python mode is not exposed as a line
 * tokenizer).  Triple-quoted strings are carried across lines.
 */
import { LineTokenizer, Scanner, TokenKind } from './tokens';

/** Carried between lines: the open triple quote, if any. */
export interface PythonState {
  readonly openTriple: '"""' | "'''" | null;
}

const WS = /\s+/y;
const COMMENT = /#.*/y;
const TRIPLE_OPEN = /[rRbBuUfF]{0,2}("""|''')/y;
const STRING = /[rRbBuUfF]{0,2}(?:"(?:[^"\\]|\\.)*"?|'(?:[^'\\]|\\.)*'?)/y;
const DECORATOR = /@[\w.]+/y;
const NUMBER = /(?:0[xX][0-9a-fA-F_]+|0[bB][01_]+|(?:\d[\d_]*)?\.?\d[\d_]*(?:[eE][-+]?\d+)?j?)/y;
const WORD = /[A-Za-z_][\w]*/y;
const PUNCT = /[()[\]{}:,.;=+\-*/%<>!&|^~@]+/y;

const KEYWORDS = new Set(
  ('False None True and as assert async await break class continue def del elif else except ' +
    'finally for from global if import in is lambda nonlocal not or pass raise return try while with yield').split(' ')
);
const BUILTINS = new Set(
  'range len min max abs float int bool print enumerate zip tuple list'.split(' ')
);

function tokenizePythonLine(line: string, state: PythonState) {
  const s = new Scanner(line);
  let open = state.openTriple;
  let afterDef = false;
  while (!s.done) {
    if (open !== null) {
      const close = line.indexOf(open, s.pos);
      s.emitTo(close < 0 ? line.length : close + 3, 'string');
      open = close < 0 ? open : null;
      continue;
    }
    if (s.take(WS, null) !== null || s.take(COMMENT, 'comment') !== null) {
      continue;
    }
    const triple = s.take(TRIPLE_OPEN, null);
    if (triple !== null) {
      const quote = triple.endsWith('"""') ? '"""' : "'''";
      const close = line.indexOf(quote, s.pos);
      s.pos -= triple.length;
      s.emitTo(close < 0 ? line.length : close + 3, 'string');
      open = close < 0 ? quote : null;
      continue;
    }
    if (
      s.take(STRING, 'string') !== null ||
      s.take(DECORATOR, 'meta') !== null ||
      s.take(NUMBER, 'number') !== null
    ) {
      continue;
    }
    const word = s.take(WORD, null);
    if (word !== null) {
      let kind: TokenKind = 'variable';
      if (afterDef) {
        kind = 'def';
      } else if (KEYWORDS.has(word)) {
        kind = 'keyword';
      } else if (BUILTINS.has(word)) {
        kind = 'builtin';
      }
      afterDef = word === 'def' || word === 'class';
      s.tokens.push({ from: s.pos - word.length, to: s.pos, kind });
      continue;
    }
    if (s.take(PUNCT, 'punctuation') === null) {
      s.skip();
    }
  }
  return { tokens: s.tokens, state: { openTriple: open } };
}

/** Python, for the renderer's source pane. */
export const pythonTokenizer: LineTokenizer<PythonState> = {
  name: 'Python',
  lineComment: '#',
  start: () => ({ openTriple: null }),
  line: tokenizePythonLine
};
