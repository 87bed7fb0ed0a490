/**
 * The occupancy widget in a notebook reopened after a kernel restart.
 *
 * Its output carries the widget (`application/vnd.jupyter.widget-view+json`) and
 * warp_lab's static card (`text/html`). JupyterLab renders one MIME type per output,
 * the highest ranked its renderers allow: for a trusted output that is the widget
 * (jupyterlab-manager's `WidgetRenderer`, ranked above HTML; an untrusted output gets
 * the HTML, the widget renderer not being "safe"). When the kernel that made the
 * widget is gone, `WidgetRenderer.renderModel` finds no model once the widget manager
 * has restored, writes "Error displaying widget: model not found" into its node and
 * stops (ipywidgets 8, `@jupyter-widgets/jupyterlab-manager` `renderer.ts`; it has no
 * fallback to another MIME type). This plugin watches for that text and, for an output
 * whose `text/html` is warp_lab's static card (marked `data-wl-static`), renders the
 * card there with the notebook's own HTML renderer instead; other widgets are left alone.
 */
import { JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';

/** What jupyterlab-manager writes when the model of a widget view is gone. */
export const MODEL_NOT_FOUND = 'Error displaying widget: model not found';
/** The attribute warp_lab's static `text/html` cards carry (`widgets.static_html`). */
export const STATIC_MARK = 'data-wl-static';

/** The parts of JupyterLab's notebook, output area and rendermime objects used here. */
interface IMimeModelLike {
  data: Record<string, unknown>;
  trusted: boolean;
}
interface IRendererLike {
  node: HTMLElement;
  renderModel(model: {
    data: Record<string, unknown>;
    metadata: Record<string, unknown>;
    trusted: boolean;
    setData(options: unknown): void;
  }): Promise<void>;
}
interface IOutputAreaLike {
  widgets: ReadonlyArray<{ node: HTMLElement }>;
  model: { length: number; get(index: number): IMimeModelLike };
}
interface INotebookLike {
  rendermime: { createRenderer(mimeType: string): IRendererLike };
  widgets: ReadonlyArray<{ outputArea?: IOutputAreaLike }>;
}

/** The notebook output holding `node`, with the notebook, if any panel shows it. */
function findOutput(
  app: JupyterFrontEnd,
  node: HTMLElement
): { notebook: INotebookLike; output: IMimeModelLike } | null {
  for (const panel of app.shell.widgets('main')) {
    const notebook = (panel as unknown as { content?: INotebookLike }).content;
    if (!notebook?.rendermime || !notebook.widgets || !panel.node.contains(node)) {
      continue;
    }
    for (const cell of notebook.widgets) {
      const area = cell.outputArea;
      if (!area) {
        continue;
      }
      const index = area.widgets.findIndex(child => child.node.contains(node));
      if (index >= 0 && index < area.model.length) {
        return { notebook, output: area.model.get(index) };
      }
    }
  }
  return null;
}

/** Replace the error in `node` by the output's static card; false if it is not ours. */
export async function showStaticCard(app: JupyterFrontEnd, node: HTMLElement): Promise<boolean> {
  const found = findOutput(app, node);
  const card = found?.output.data['text/html'];
  const text = Array.isArray(card) ? card.join('') : card;
  if (!found || typeof text !== 'string' || !text.includes(STATIC_MARK)) {
    return false;
  }
  const renderer = found.notebook.rendermime.createRenderer('text/html');
  await renderer.renderModel({
    data: { 'text/html': text },
    metadata: {},
    trusted: found.output.trusted,
    setData: () => undefined
  });
  if (node.textContent !== MODEL_NOT_FOUND) {
    return false;  // the widget rendered after all (a model arrived meanwhile)
  }
  node.textContent = '';
  node.classList.remove('jupyter-widgets');
  node.classList.add('wl-widget-fallback');
  node.title = 'the kernel that made this widget is gone: its static card is shown';
  node.appendChild(renderer.node);
  return true;
}

export const widgetFallbackPlugin: JupyterFrontEndPlugin<void> = {
  id: 'warp-lab:widget-fallback',
  description: "Shows warp_lab's static occupancy card where its widget's model is gone.",
  autoStart: true,
  activate: (app: JupyterFrontEnd): void => {
    // cheap per record: only a single text node equal to the error is looked at
    const observer = new MutationObserver(records => {
      for (const record of records) {
        const added = record.addedNodes;
        if (
          added.length === 1 &&
          added[0].nodeType === Node.TEXT_NODE &&
          (added[0] as Text).data === MODEL_NOT_FOUND &&
          record.target instanceof HTMLElement
        ) {
          void showStaticCard(app, record.target);
        }
      }
    });
    observer.observe(document.body, { childList: true, subtree: true });
  }
};
