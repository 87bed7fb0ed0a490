/**
 * Linked hover highlighting and scroll-sync between panes: hovering a line
 * in any pane highlights the lines of every pane that come from the same
 * Python line(s) and scrolls them into view; scrolling the Python pane
 * scrolls the others to the code of its top visible line.  From the keyboard,
 * a focused pane body's arrow keys (Home/End, Escape to clear) move a cursor
 * line that links the same way.
 */
import { PaneId } from './bundle';
import { LineLinks } from './linemap';
import { scrollRowIntoView } from './dom';
import { Pane } from './pane';

const LINKED = 'wl-linked';
const CURSOR = 'wl-cursor';
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

  private cursor: HTMLElement | null = null;

  /** Listen on `root` (the view's node, which contains every pane). */
  attach(root: HTMLElement): void {
    root.addEventListener('mouseover', event => this.onHover(event));
    root.addEventListener('mouseleave', () => {
      if (this.cursor === null) {
        this.clear();
      }
    });
    root.addEventListener('keydown', event => this.onKey(event));
    // the mouse takes over from the keyboard cursor once it moves (not when a
    // pane scrolls under a still pointer)
    root.addEventListener('mousemove', event => {
      if (this.cursor !== null && (event.movementX !== 0 || event.movementY !== 0)) {
        this.setCursor(null);
      }
    });
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
    if (!row || !pane || !pane.mapped || this.cursor !== null) {
      return;
    }
    this.link(pane, Number(row.dataset.line));
  }

  /** Arrow keys in a focused pane body move its cursor line and link it. */
  private onKey(event: KeyboardEvent): void {
    const target = event.target instanceof HTMLElement ? event.target : null;
    const pane = [...this.panes.values()].find(p => p.body === target);
    if (!pane || pane.rows.length === 0 || event.altKey || event.ctrlKey || event.metaKey) {
      return;
    }
    const current = this.cursor && pane.rows.includes(this.cursor) ? Number(this.cursor.dataset.line) : 0;
    const last = pane.rows.length;
    const page = Math.max(1, Math.floor(pane.body.clientHeight / (pane.rows[0].offsetHeight || 16)) - 1);
    const moves: Record<string, number> = {
      ArrowDown: current + 1,
      ArrowUp: current === 0 ? 1 : current - 1,
      PageDown: current + page,
      PageUp: current - page,
      Home: 1,
      End: last
    };
    if (event.key === 'Escape' && this.cursor !== null) {
      this.setCursor(null);
      this.clear();
      event.preventDefault();
      event.stopPropagation();  // JupyterLab's Escape leaves the cell's edit mode
      return;
    }
    if (!(event.key in moves)) {
      return;
    }
    event.preventDefault();
    event.stopPropagation();  // notebook shortcuts (cell up/down) stay out of it
    let line = Math.min(last, Math.max(1, moves[event.key]));
    // a hidden row (a SASS file comment) is stepped over in the direction of travel
    const step = event.key === 'Home' ? 1 : event.key === 'End' || line < current ? -1 : 1;
    while (pane.rowOf(line)?.classList.contains('wl-hidden-line')) {
      const next = line + step;
      if (next < 1 || next > last) {
        return;
      }
      line = next;
    }
    const row = pane.rowOf(line);
    if (!row) {
      return;
    }
    this.setCursor(row);
    scrollRowIntoView(pane.body, row);
    this.hoveredKey = '';
    if (pane.mapped) {
      this.link(pane, line);
    } else {
      this.clear();
    }
  }

  private setCursor(row: HTMLElement | null): void {
    this.cursor?.classList.remove(CURSOR);
    this.cursor?.removeAttribute('aria-current');
    this.cursor = row;
    row?.classList.add(CURSOR);
    row?.setAttribute('aria-current', 'true');
  }

  /** Highlight the lines linked to `line` of `pane` in every pane; scroll the others to them. */
  private link(pane: Pane, line: number): void {
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
