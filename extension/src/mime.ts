/**
 * The MIME renderer extension (package.json "mimeExtension"): renders
 * `application/vnd.warp-lab.kernel+json` in notebooks, trusted or not.
 */
import { IRenderMime } from '@jupyterlab/rendermime-interfaces';

import { MIME_TYPE } from './bundle';
import { KernelView } from './view';

/**
 * The renderer factory.  `safe: true` because the view inserts every string
 * as text (no HTML, no scripts), so JupyterLab may use it for untrusted
 * outputs too, e.g. a notebook reopened from disk.
 */
export const rendererFactory: IRenderMime.IRendererFactory = {
  safe: true,
  mimeTypes: [MIME_TYPE],
  defaultRank: 0,
  createRenderer: options => new KernelView(options)
};

const extension: IRenderMime.IExtension = {
  id: 'warp-lab:kernel-renderer',
  description: 'Renders warp_lab kernel bundles: Python, LLVM IR, PTX and SASS side by side.',
  rendererFactory,
  // Ranked before text/html (rank 50), so the interactive view wins over the
  // static HTML the Python side puts next to it.
  rank: 0,
  dataType: 'json'
};

export default extension;
