/**
 * SASS tokenizer for `nvdisasm` output (CUDA Binary Utilities, "nvdisasm"):
 * `/*0040*\/` address and encoding comments, `@P0` guards, upper-case
 * opcodes with `.MODIFIER` suffixes, registers R/UR/P/UP/SR_*, constant-bank
 * operands `c[0x0][0x28]`, `.L_x_0:` labels and section directives.
 */
import { LineTokenizer, Scanner } from './tokens';

/** SASS comments never span lines in nvdisasm output; the state is empty. */
export type SassState = null;

const WS = /\s+/y;
const BLOCK_COMMENT = /\/\*.*?(?:\*\/|$)/y;
const LINE_COMMENT = /\/\/.*/y;
const STRING = /"[^"]*"?/y;
const GUARD = /@!?U?P(?:\d|T)/y;
const LABEL_DEF = /\.?[A-Za-z_$][\w.$]*:/y;
const DIRECTIVE = /\.[a-z_][\w]*/y;
const OPCODE = /[A-Z][A-Z0-9_]*(?:\.[A-Z0-9_]+)*/y;
const REGISTER = /-?(?:R\d+|RZ|UR\d+|URZ|P\d|PT|UP\d|UPT|SR_[A-Za-z_0-9]+(?:\.[XYZ])?|SRZ)(?:\.[A-Z0-9_]+)*\b/y;
const CONST_BANK = /c\[0x[0-9a-fA-F]+\]/y;
const NUMBER = /-?(?:0x[0-9a-fA-F]+|\d+(?:\.\d+)?(?:e[-+]?\d+)?)/y;
const IDENT = /\.?[A-Za-z_$][\w.$@]*/y;
const PUNCT = /[{}()[\];,|+\-~!]/y;

function tokenizeSassLine(line: string, state: SassState) {
  const s = new Scanner(line);
  let seenHead = false;
  while (!s.done) {
    if (
      s.take(WS, null) !== null ||
      s.take(BLOCK_COMMENT, 'comment') !== null ||
      s.take(LINE_COMMENT, 'comment') !== null ||
      s.take(STRING, 'string') !== null
    ) {
      continue;
    }
    if (!seenHead) {
      if (s.take(GUARD, 'atom') !== null || s.take(LABEL_DEF, 'def') !== null) {
        continue;
      }
      if (s.take(DIRECTIVE, 'meta') !== null || s.take(OPCODE, 'keyword') !== null) {
        seenHead = true;
        continue;
      }
    }
    if (
      s.take(REGISTER, 'variable') !== null ||
      s.take(CONST_BANK, 'builtin') !== null ||
      s.take(NUMBER, 'number') !== null ||
      s.take(IDENT, 'variable-2') !== null ||
      s.take(PUNCT, 'punctuation') !== null
    ) {
      continue;
    }
    s.skip();
  }
  return { tokens: s.tokens, state };
}

/** The SASS language: `.sass` files and the renderer's SASS pane. */
export const sassTokenizer: LineTokenizer<SassState> = {
  name: 'SASS',
  lineComment: '//',
  start: () => null,
  line: tokenizeSassLine
};
