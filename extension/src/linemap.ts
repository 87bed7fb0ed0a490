/**
 * Line correspondence between the panes, built once per bundle from its
 * `line_map` (Python line → pane lines) and the Python pane's row numbers
 * (`python_rows`, or `first_line` on).
 */
import { KernelBundle, MAPPED_PANES, PaneId, rowNumbers } from './bundle';

/** Compiler Explorer-like palette, with alpha so text stays readable. */
const PALETTE = [
  '#e6194b', '#3cb44b', '#ffe119', '#4363d8', '#f58231', '#911eb4',
  '#46f0f0', '#f032e6', '#bcf60c', '#fabebe', '#008080', '#9a6324'
];
const PALETTE_ALPHA = '40';

/** Which lines of which pane belong to which Python line, both ways. */
export class LineLinks {
  private readonly forward = new Map<PaneId, Map<number, number[]>>();
  private readonly backward = new Map<PaneId, Map<number, number[]>>();
  private readonly colors = new Map<number, string>();

  /**
   * @param bundle the validated bundle; Python line keys are file/cell line
   *   numbers, pane lines 1-based.
   */
  constructor(bundle: KernelBundle) {
    const py = bundle.panes.python;
    const pyCount = py.text === null ? 0 : py.text.split('\n').length;
    const pyForward = new Map<number, number[]>();
    const pyBackward = new Map<number, number[]>();
    rowNumbers(py, pyCount).forEach((pyLine, k) => {
      if (pyLine !== null) {  // a gap row stands for no line
        pyForward.set(pyLine, [k + 1]);
        pyBackward.set(k + 1, [pyLine]);
      }
    });
    this.forward.set('python', pyForward);
    this.backward.set('python', pyBackward);
    for (const pane of MAPPED_PANES) {
      const fwd = bundle.lineMap[pane];
      const back = new Map<number, number[]>();
      for (const [pyLine, lines] of fwd) {
        for (const line of lines) {
          const list = back.get(line) ?? [];
          list.push(pyLine);
          back.set(line, list);
        }
      }
      this.forward.set(pane, fwd);
      this.backward.set(pane, back);
    }
    const mapped = new Set<number>();
    for (const pane of MAPPED_PANES) {
      for (const pyLine of bundle.lineMap[pane].keys()) {
        mapped.add(pyLine);
      }
    }
    let next = 0;
    for (const pyLine of [...mapped].sort((a, b) => a - b)) {
      const given = bundle.colors.get(pyLine);
      this.colors.set(pyLine, given ?? PALETTE[next++ % PALETTE.length] + PALETTE_ALPHA);
    }
  }

  /** Python lines (file/cell numbering) that produced `line` of `pane`. */
  pythonLinesOf(pane: PaneId, line: number): number[] {
    return this.backward.get(pane)?.get(line) ?? [];
  }

  /** 1-based lines of `pane` generated from Python line `pyLine`. */
  paneLinesOf(pane: PaneId, pyLine: number): number[] {
    return this.forward.get(pane)?.get(pyLine) ?? [];
  }

  /** The colour of a Python line, or null when nothing maps to it. */
  colorOf(pyLine: number): string | null {
    return this.colors.get(pyLine) ?? null;
  }

  /** The colour of `line` of `pane`: that of its first Python line. */
  colorOfPaneLine(pane: PaneId, line: number): string | null {
    const py = this.pythonLinesOf(pane, line);
    return py.length > 0 ? this.colorOf(py[0]) : null;
  }
}
