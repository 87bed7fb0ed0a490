/**
 * The three assembly-level languages and their CodeMirror 6 support.
 */
import { LanguageSupport, StreamLanguage } from '@codemirror/language';

import { llvmTokenizer } from './llvm';
import { ptxTokenizer } from './ptx';
import { pythonTokenizer } from './python';
import { sassTokenizer } from './sass';
import { LineTokenizer, streamParserFor } from './tokens';

export { splitInstruction } from './ptx';
export { tokenizeText } from './tokens';
export type { Token, TokenKind, LineTokenizer } from './tokens';
export { llvmTokenizer, ptxTokenizer, sassTokenizer };
export { pythonTokenizer };

/** What JupyterLab needs to know to register one language. */
export interface LanguageSpec {
  /** Language name, e.g. "PTX". */
  name: string;
  /** Document-registry file type name. */
  fileType: string;
  /** MIME type of such files. */
  mime: string;
  /** File extensions without the dot, e.g. "ptx". */
  extensions: string[];
  /** The tokenizer, shared with the renderer. */
  tokenizer: LineTokenizer<unknown>;
}

function widen<S>(t: LineTokenizer<S>): LineTokenizer<unknown> {
  return t as LineTokenizer<unknown>;
}

/** PTX, LLVM IR and SASS, in the order the renderer shows them. */
export const LANGUAGES: LanguageSpec[] = [
  {
    name: 'LLVM IR',
    fileType: 'llvm-ir',
    mime: 'text/x-llvm-ir',
    extensions: ['ll'],
    tokenizer: widen(llvmTokenizer)
  },
  {
    name: 'PTX',
    fileType: 'ptx',
    mime: 'text/x-ptx',
    extensions: ['ptx'],
    tokenizer: widen(ptxTokenizer)
  },
  {
    name: 'SASS',
    fileType: 'sass-asm',
    mime: 'text/x-nvidia-sass',
    extensions: ['sass'],
    tokenizer: widen(sassTokenizer)
  }
];

/** The tokenizer of each renderer pane, by pane id. */
export const PANE_TOKENIZERS: Record<'python' | 'llvm' | 'ptx' | 'sass', LineTokenizer<unknown>> = {
  python: widen(pythonTokenizer),
  llvm: widen(llvmTokenizer),
  ptx: widen(ptxTokenizer),
  sass: widen(sassTokenizer)
};

/** A CodeMirror 6 `LanguageSupport` for one of the languages. */
export function languageSupport(spec: LanguageSpec): LanguageSupport {
  return new LanguageSupport(StreamLanguage.define(streamParserFor(spec.tokenizer)));
}
