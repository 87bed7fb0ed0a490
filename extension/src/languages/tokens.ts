/**
 * A small, Lezer-free line tokenizer shared by the CodeMirror 6 editor modes
 * and by the kernel renderer's panes.
 *
 * Each language is a `LineTokenizer`: a pure function from one line of text
 * (plus the state carried over from the previous line, e.g. "inside a block
 * comment") to the line's tokens and the next state.  `streamParserFor`
 * adapts it to CodeMirror's `StreamParser`, `tokenizeText` runs it over a
 * whole document for the renderer, so both show the very same tokens.
 */
import type { StreamParser, StringStream } from '@codemirror/language';

/**
 * Token kinds, spelled as CodeMirror's legacy token names so that
 * `StreamLanguage` maps them onto highlight tags (and JupyterLab's theme
 * colours them); the renderer uses them as CSS class suffixes.
 */
export type TokenKind =
  | 'comment'
  | 'meta'
  | 'keyword'
  | 'type'
  | 'variable'
  | 'variable-2'
  | 'def'
  | 'atom'
  | 'number'
  | 'string'
  | 'punctuation'
  | 'builtin';

/** One token: the half-open character range [from, to) of its line. */
export interface Token {
  from: number;
  to: number;
  kind: TokenKind;
}

/** The result of tokenizing one line. */
export interface LineResult<S> {
  tokens: Token[];
  state: S;
}

/** A language as a line tokenizer with a state carried between lines. */
export interface LineTokenizer<S> {
  /** Language name shown by JupyterLab, e.g. "PTX". */
  name: string;
  /** State before the first line. */
  start(): S;
  /** Tokens of `line` (sorted, non-overlapping) and the state after it. */
  line(line: string, state: S): LineResult<S>;
  /** Line-comment marker for the editor's toggle-comment command. */
  lineComment: string;
}

/**
 * A cursor over one line with sticky-regex matching; tokenizers push tokens
 * as they scan.
 */
export class Scanner {
  pos = 0;
  readonly tokens: Token[] = [];

  constructor(readonly text: string) {}

  /** True when the whole line has been consumed. */
  get done(): boolean {
    return this.pos >= this.text.length;
  }

  /**
   * Match `re` (which must carry the sticky `y` flag) at the cursor; on a
   * match, advance past it, push a token of `kind` (unless null) and return
   * the matched text, else return null and stay put.
   */
  take(re: RegExp, kind: TokenKind | null): string | null {
    re.lastIndex = this.pos;
    const m = re.exec(this.text);
    if (!m || m[0].length === 0) {
      return null;
    }
    const from = this.pos;
    this.pos += m[0].length;
    if (kind !== null) {
      this.tokens.push({ from, to: this.pos, kind });
    }
    return m[0];
  }

  /** Push a token of `kind` from the cursor to `end` and move there. */
  emitTo(end: number, kind: TokenKind): void {
    if (end > this.pos) {
      this.tokens.push({ from: this.pos, to: end, kind });
      this.pos = end;
    }
  }

  /** Skip one character that no rule claimed. */
  skip(): void {
    this.pos += 1;
  }
}

/** Tokens of every line of `text`, one array per line ("\n" separated). */
export function tokenizeText<S>(
  lang: LineTokenizer<S>,
  text: string
): { lines: string[]; tokens: Token[][] } {
  const lines = text.split('\n');
  const tokens: Token[][] = [];
  let state = lang.start();
  for (const line of lines) {
    const result = lang.line(line.replace(/\r$/, ''), state);
    tokens.push(result.tokens);
    state = result.state;
  }
  return { lines, tokens };
}

interface AdapterState<S> {
  inner: S;
  tokens: Token[];
}

/**
 * Adapt a `LineTokenizer` to CodeMirror 6's `StreamParser`: the line is
 * tokenized once when the stream is at its start, then handed out token by
 * token.
 */
export function streamParserFor<S>(
  lang: LineTokenizer<S>
): StreamParser<AdapterState<S>> {
  return {
    name: lang.name.toLowerCase(),
    startState: () => ({ inner: lang.start(), tokens: [] }),
    copyState: (state: AdapterState<S>) => ({
      inner: state.inner,
      tokens: state.tokens
    }),
    token(stream: StringStream, state: AdapterState<S>): string | null {
      if (stream.sol()) {
        const result = lang.line(stream.string, state.inner);
        state.inner = result.state;
        state.tokens = result.tokens;
      }
      const next = state.tokens.find(t => t.to > stream.pos);
      if (!next) {
        stream.skipToEnd();
        return null;
      }
      if (next.from > stream.pos) {
        stream.pos = next.from;
        return null;
      }
      stream.pos = next.to;
      return next.kind;
    },
    languageData: { commentTokens: { line: lang.lineComment } }
  };
}
