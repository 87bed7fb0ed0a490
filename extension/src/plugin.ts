/**
 * The front-end plugin: registers PTX, LLVM IR and SASS with JupyterLab's
 * editor language registry and document registry, so `.ptx`, `.ll` and
 * `.sass` files open in the editor highlighted.
 */
import { JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { IEditorLanguageRegistry } from '@jupyterlab/codemirror';

import { LANGUAGES, languageSupport } from './languages';

export const languagesPlugin: JupyterFrontEndPlugin<void> = {
  id: 'warp-lab:languages',
  description: 'PTX, LLVM IR and SASS syntax highlighting for the editor.',
  autoStart: true,
  requires: [IEditorLanguageRegistry],
  activate: (app: JupyterFrontEnd, languages: IEditorLanguageRegistry): void => {
    for (const spec of LANGUAGES) {
      if (languages.findByName(spec.name) === null) {
        languages.addLanguage({
          name: spec.name,
          displayName: spec.name,
          mime: spec.mime,
          extensions: spec.extensions,
          load: async () => languageSupport(spec)
        });
      }
      app.docRegistry.addFileType({
        name: spec.fileType,
        displayName: spec.name,
        extensions: spec.extensions.map(ext => `.${ext}`),
        mimeTypes: [spec.mime],
        fileFormat: 'text',
        contentType: 'file'
      });
    }
  }
};
