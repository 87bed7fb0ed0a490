/** warp_lab's JupyterLab extension: the editor languages plugin and the widget fallback. */
import { languagesPlugin } from './plugin';
import { widgetFallbackPlugin } from './widgetfallback';

export { MIME_TYPE } from './bundle';
export { languagesPlugin, widgetFallbackPlugin };

export default [languagesPlugin, widgetFallbackPlugin];
