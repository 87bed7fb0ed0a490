/**
 * Linked hover highlighting and scroll-sync between panes: hovering a line
 * in any pane highlights the lines of every pane that come from the same
 * Python line(s) and scrolls them into view; scrolling the Python pane
 * scrolls the others to the code of its top visible line.
 */
import { PaneId } from './bundle';
import { LineLinks } from './linemap';
import { Pane } from './pane';

const LINKED = 'wl-linked';
/** Ignore scroll events this long after scrolling a pane ourselves (ms). */
const PROGRAMMATIC_SCROLL_MS = 200;

/** Wires the hover and scroll behaviour of a set of panes. */
export class PaneLinker {
  private highlighted: HTMLElement[] = [];
  private hoveredKey = '';
  private quietUntil = 0;

  /**
   * @param panes the panes by id (the Python pane must be among them)
   * @param links the line correspondence of the bundle
   */
  constructor(
    private readonly panes: Map<PaneId, Pane>,
    private readonly links: LineLinks
  ) {}

  /** Listen on `root` (the view's node, which contains every pane). */
  attach(root: HTMLElement): void {
    root.addEventListener('mouseover', event => this.onHover(event));
    root.addEventListener('mouseleave', () => this.clear());
    const python = this.panes.get('python');
    if (python) {
      python.body.addEventListener('scroll', () => this.onPythonScroll(python), { passive: true });
    }
  }

  private onHover(event: MouseEvent): void {
    const target = event.target instanceof Element ? event.target : null;
    const row = target?.closest<HTMLElement>('.wl-line');
    const paneNode = row?.closest<HTMLElement>('.wl-pane');
    const paneId = paneNode?.dataset.pane as PaneId | undefined;
    const pane = paneId ? this.panes.get(paneId) : undefined;
    if (!row || !pane || !pane.mapped) {
      return;
    }
    const line = Number(row.dataset.line);
    const key = `${pane.id}:${line}`;
    if (key === this.hoveredKey) {
      return;
    }
    this.clear();
    this.hoveredKey = key;
    const pyLines = this.links.pythonLinesOf(pane.id, line);
    for (const other of this.panes.values()) {
      if (!other.mapped) {
        continue;
      }
      const lines = pyLines.flatMap(py => this.links.paneLinesOf(other.id, py));
      for (const n of lines) {
        const r = other.rowOf(n);
        if (r) {
          r.classList.add(LINKED);
          this.highlighted.push(r);
        }
      }
      if (other !== pane && lines.length > 0) {
        this.quietUntil = performance.now() + PROGRAMMATIC_SCROLL_MS;
        other.scrollToLine(Math.min(...lines));
      }
    }
  }

  private clear(): void {
    for (const r of this.highlighted) {
      r.classList.remove(LINKED);
    }
    this.highlighted = [];
    this.hoveredKey = '';
  }

  /** Follow the Python pane's top visible line in the other panes. */
  private onPythonScroll(python: Pane): void {
    if (performance.now() < this.quietUntil) {
      return;
    }
    const top = python.rows.find(r => r.offsetTop + r.offsetHeight > python.body.scrollTop);
    if (!top) {
      return;
    }
    const pyLine = this.links.pythonLinesOf('python', Number(top.dataset.line))[0];
    for (const other of this.panes.values()) {
      const lines = other === python || !other.mapped ? [] : this.links.paneLinesOf(other.id, pyLine);
      if (lines.length > 0) {
        const row = other.rowOf(Math.min(...lines));
        if (row) {
          other.body.scrollTop = row.offsetTop;
        }
      }
    }
  }
}
