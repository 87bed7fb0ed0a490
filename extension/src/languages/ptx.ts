/**
 * PTX tokenizer (NVIDIA PTX ISA, chapter "Syntax": comments, directives,
 * instructions with `.modifier` suffixes, `%` registers, `@p` guards,
 * `0f`/`0d` hexadecimal float literals).
 */
import { LineTokenizer, Scanner, TokenKind } from './tokens';

/** Carried between lines: are we inside a C-style block comment? */
export interface PtxState {
  readonly inBlockComment: boolean;
}

const WS = /\s+/y;
const LINE_COMMENT = /\/\/.*/y;
const BLOCK_OPEN = /\/\*/y;
const STRING = /"(?:[^"\\]|\\.)*"?/y;
const GUARD = /@!?%?[\w$]+/y;
const LABEL_DEF = /[$A-Za-z_][\w$]*:/y;
const DOTTED = /\.[A-Za-z_][\w]*/y;
const OPCODE = /[a-z][a-z0-9_]*(?:\.[a-z0-9_]+)*/y;
const REGISTER = /%[\w$]+(?:\.[xyzw])?/y;
const NUMBER =
  /(?:0[fF][0-9a-fA-F]{8}|0[dD][0-9a-fA-F]{16}|0[xX][0-9a-fA-F]+U?|\d+(?:\.\d+)?(?:[eE][-+]?\d+)?U?)/y;
const IDENT = /[$A-Za-z_][\w$]*/y;
const PUNCT = /[{}()[\];,<>+\-|!=*:]/y;

/** PTX state-space, type and vector spellings: shown as types. */
const TYPE_WORDS = new Set([
  'b8', 'b16', 'b32', 'b64', 'b128',
  'u8', 'u16', 'u32', 'u64',
  's8', 's16', 's32', 's64',
  'f16', 'f16x2', 'bf16', 'bf16x2', 'f32', 'f64', 'pred', 'v2', 'v4', 'v8'
]);

/**
 * The PTX opcode of an instruction token such as `ld.global.nc.f32`:
 * `{ opcode: 'ld', modifiers: ['global', 'nc', 'f32'] }`.
 */
export function splitInstruction(token: string): {
  opcode: string;
  modifiers: string[];
} {
  const parts = token.split('.');
  return { opcode: parts[0], modifiers: parts.slice(1) };
}

function tokenizePtxLine(line: string, state: PtxState) {
  const s = new Scanner(line);
  let inBlock = state.inBlockComment;
  let seenHead = false; // an opcode or a directive has been read
  while (!s.done) {
    if (inBlock) {
      const close = line.indexOf('*/', s.pos);
      const end = close < 0 ? line.length : close + 2;
      s.emitTo(end, 'comment');
      inBlock = close < 0;
      continue;
    }
    if (s.take(WS, null) !== null || s.take(LINE_COMMENT, 'comment') !== null) {
      continue;
    }
    if (s.take(BLOCK_OPEN, 'comment') !== null) {
      s.pos -= 2;
      s.tokens.pop();
      inBlock = true;
      continue;
    }
    if (s.take(STRING, 'string') !== null) {
      continue;
    }
    if (!seenHead) {
      if (s.take(GUARD, 'atom') !== null || s.take(LABEL_DEF, 'def') !== null) {
        continue;
      }
      if (s.take(DOTTED, 'meta') !== null || s.take(OPCODE, 'keyword') !== null) {
        seenHead = true;
        continue;
      }
    }
    const dotted = s.take(DOTTED, null);
    if (dotted !== null) {
      const kind: TokenKind = TYPE_WORDS.has(dotted.slice(1)) ? 'type' : 'meta';
      s.tokens.push({ from: s.pos - dotted.length, to: s.pos, kind });
      continue;
    }
    if (
      s.take(REGISTER, 'variable') !== null ||
      s.take(NUMBER, 'number') !== null ||
      s.take(IDENT, 'variable-2') !== null ||
      s.take(PUNCT, 'punctuation') !== null
    ) {
      continue;
    }
    s.skip();
  }
  return { tokens: s.tokens, state: { inBlockComment: inBlock } };
}

/** The PTX language: `.ptx` files and the renderer's PTX pane. */
export const ptxTokenizer: LineTokenizer<PtxState> = {
  name: 'PTX',
  lineComment: '//',
  start: () => ({ inBlockComment: false }),
  line: tokenizePtxLine
};
