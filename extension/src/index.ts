/** warp_lab's JupyterLab extension: the editor languages plugin. */
import { languagesPlugin } from './plugin';

export { MIME_TYPE } from './bundle';
export { languagesPlugin };

export default [languagesPlugin];
