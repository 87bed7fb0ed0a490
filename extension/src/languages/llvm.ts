/**
 * LLVM IR tokenizer (LLVM Language Reference: identifiers `%local`,
 * `@global`, metadata `!name`/`!0`, attribute groups `#0`, types,
 * instructions, `;` comments).
 */
import { LineTokenizer, Scanner } from './tokens';

/** LLVM IR has no multi-line tokens we colour; the state is empty. */
export type LlvmState = null;

const WS = /\s+/y;
const COMMENT = /;.*/y;
const STRING = /c?"[^"]*"?/y;
const LOCAL = /%(?:"[^"]*"|[-a-zA-Z$._0-9]+)/y;
const GLOBAL = /@(?:"[^"]*"|[-a-zA-Z$._0-9]+)/y;
const METADATA = /!(?:[-a-zA-Z$._0-9]+|\{)?/y;
const ATTR_GROUP = /#\d+/y;
const TYPE = /(?:i\d+|half|bfloat|float|double|fp128|x86_fp80|ppc_fp128|void|label|metadata|ptr|token)\b/y;
const LABEL_DEF = /[-a-zA-Z$._0-9]+:/y;
const NUMBER = /-?(?:0x[0-9A-Fa-f]+|\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)/y;
const WORD = /[A-Za-z_][A-Za-z0-9_.]*/y;
const PUNCT = /[{}()[\]<>,=*]/y;

/** Instruction opcodes and top-level keywords (Language Reference). */
const KEYWORDS = new Set(
  (
    'define declare ret br switch indirectbr invoke resume unreachable ' +
    'fneg add fadd sub fsub mul fmul udiv sdiv fdiv urem srem frem ' +
    'shl lshr ashr and or xor extractelement insertelement shufflevector ' +
    'extractvalue insertvalue alloca load store fence cmpxchg atomicrmw ' +
    'getelementptr trunc zext sext fptrunc fpext fptoui fptosi uitofp ' +
    'sitofp ptrtoint inttoptr bitcast addrspacecast icmp fcmp phi select ' +
    'freeze call tail musttail notail va_arg landingpad catchpad cleanuppad ' +
    'target datalayout triple source_filename attributes global constant ' +
    'type private internal external linkonce weak common appending'
  ).split(' ')
);

const ATOMS = new Set(['true', 'false', 'null', 'undef', 'poison', 'zeroinitializer', 'none']);

function tokenizeLlvmLine(line: string, state: LlvmState) {
  const s = new Scanner(line);
  if (s.take(LABEL_DEF, 'def') !== null) {
    // a basic-block label such as `entry:` or `5:` starts the line
  }
  while (!s.done) {
    if (
      s.take(WS, null) !== null ||
      s.take(COMMENT, 'comment') !== null ||
      s.take(STRING, 'string') !== null ||
      s.take(LOCAL, 'variable') !== null ||
      s.take(GLOBAL, 'def') !== null ||
      s.take(ATTR_GROUP, 'meta') !== null ||
      s.take(METADATA, 'meta') !== null ||
      s.take(TYPE, 'type') !== null ||
      s.take(NUMBER, 'number') !== null
    ) {
      continue;
    }
    const word = s.take(WORD, null);
    if (word !== null) {
      const kind = KEYWORDS.has(word) ? 'keyword' : ATOMS.has(word) ? 'atom' : 'builtin';
      s.tokens.push({ from: s.pos - word.length, to: s.pos, kind });
      continue;
    }
    if (s.take(PUNCT, 'punctuation') === null) {
      s.skip();
    }
  }
  return { tokens: s.tokens, state };
}

/** The LLVM IR language: `.ll` files and the renderer's LLVM pane. */
export const llvmTokenizer: LineTokenizer<LlvmState> = {
  name: 'LLVM IR',
  lineComment: ';',
  start: () => null,
  line: tokenizeLlvmLine
};
