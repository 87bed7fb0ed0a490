/**
 * The notebook bundle `application/vnd.warp-lab.kernel+json`
 * (docs/decisions/0007-notebook-bundle.md), read from untyped JSON into
 * typed, validated data.  Anything malformed raises `BundleError` with a
 * message naming the field; the renderer shows that message as text.
 */

/** The MIME type the Python side emits next to text/html. */
export const MIME_TYPE = 'application/vnd.warp-lab.kernel+json';

/** The four panes, left to right. */
export type PaneId = 'python' | 'llvm' | 'ptx' | 'sass';
export const PANE_IDS: PaneId[] = ['python', 'llvm', 'ptx', 'sass'];

/** Panes reached from Python lines through the line map. */
export type MappedPaneId = Exclude<PaneId, 'python'>;
export const MAPPED_PANES: MappedPaneId[] = ['llvm', 'ptx', 'sass'];

/** One pane's text, or why it is missing (e.g. no ptxas found). */
export interface PaneText {
  text: string | null;
  missing: string | null;
  /** File/cell line number of the pane's first line (python pane only; 1 otherwise). */
  firstLine: number;
  /**
   * File/cell line number of each row of `text`, null for a gap row between
   * parts (python pane with `python_rows` only); null: rows are numbered
   * from `firstLine` on.
   */
  numbers: (number | null)[] | null;
  /**
   * The number to show for each row when it is not its `numbers` entry
   * (`python_row_numbers`): the rows of a device function of another cell are
   * keyed past the kernel's lines (a million per file) but show that cell's
   * own line numbers; null: show `numbers`.
   */
  shown: (number | null)[] | null;
  /** Where the text comes from, as the views name it ("In[3]", a file path), or null. */
  filename: string | null;
}

/** One row of the python pane (`python_rows`): a file/cell line, or a gap (null). */
export type PythonRow = [number | null, string];

/** A Python line number → values map (keys are file/cell line numbers). */
export type LineValues<T> = Map<number, T>;

/** The bundle, validated. */
export interface KernelBundle {
  version: number;
  name: string;
  arch: string;
  opt: number | null;
  /** Options shown after -O (`fast-math`, `debug`, `maxrregcount=N`); [] in older bundles. */
  flags: string[];
  /** The python pane's text is its `python_rows` when the bundle has them. */
  panes: Record<PaneId, PaneText>;
  /** The LLVM IR before optimisation, when the bundle carries it. */
  llvmUnoptimized: string | null;
  /** Python line → 1-based lines of each mapped pane. */
  lineMap: Record<MappedPaneId, LineValues<number[]>>;
  /** Python line → CSS colour (validated hex, e.g. "#e6194b33"). */
  colors: LineValues<string>;
  /** ptxas resource usage: registers per thread, spill bytes, ... */
  resources: Record<string, string | number>;
  occupancy: Record<string, string | number>;
  heat: { instructions: LineValues<number>; liveRegisters: LineValues<number> };
  /**
   * Heat columns given per line of a pane (`pane_heat`, keys are that pane's
   * 1-based lines): the SASS pane's live registers at each instruction.
   * Empty maps in bundles without them.
   */
  paneHeat: { sass: { liveRegisters: Map<number, number> } };
  /**
   * What the cell asked to see (`view`, built once by `notebook/view_spec.py`): the panes
   * in order with their titles, the resource card's rows, the `--diff previous` table;
   * null in a bundle from before it (the renderer then shows every pane).
   */
  view: ViewSpec | null;
}

/** One entry of `view.panes`. */
export interface ViewPane {
  /** The pane's name ("python", "cuda", "llvm", "llvm_unoptimized", "ptx", "sass"). */
  key: string;
  /** The `panes` entry holding its text (a CUDA C++ source pane fills "python"). */
  slot: string;
  title: string;
  language: string;
  /** The pane it is another text of (the unoptimised IR: the LLVM pane's -O0 toggle). */
  variantOf: string | null;
  open: boolean;
  /** Why a kernel of this front end has no such pane, or null. */
  absent: string | null;
}

/** The resource card: `[label, value]` rows and warnings, or why there is none. */
export type ViewResources =
  | { arch: string; rows: [string, string][]; warnings: string[] }
  | { missing: string };

/** One pane's unified diff in `view.diff.blocks`. */
export interface DiffBlock {
  title: string;
  summary: string;
  open: boolean;
  lines: string[];
}

/** `--diff previous`: what changed since the kernel's previous compile, or why nothing can. */
export type ViewDiff =
  | { aLabel: string; bLabel: string; rows: [string, string, string][]; blocks: DiffBlock[] }
  | { missing: string };

/** The bundle's `view` record, validated. */
export interface ViewSpec {
  panes: ViewPane[];
  resources: ViewResources | null;
  diff: ViewDiff | null;
}

/** Raised for a bundle that does not follow the schema. */
export class BundleError extends Error {}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function objectAt(parent: JsonObject, key: string, where: string): JsonObject {
  const value = parent[key];
  if (value === undefined || value === null) {
    return {};
  }
  if (!isObject(value)) {
    throw new BundleError(`${where}.${key} should be an object`);
  }
  return value;
}

/**
 * A Python line key ("13") as a number; null for line 0, which compilers use
 * for "no source line" (e.g. `.loc 1 0 5`) and which no pane shows.
 */
function lineNumber(key: string, where: string): number | null {
  const n = Number(key);
  if (!Number.isInteger(n) || n < 0) {
    throw new BundleError(`${where}: line key "${key}" is not a line number`);
  }
  return n === 0 ? null : n;
}

function readPane(panes: JsonObject, id: string): PaneText {
  const raw = panes[id];
  if (raw === undefined || raw === null) {
    return {
      text: null, missing: 'not in this bundle', firstLine: 1, numbers: null, shown: null,
      filename: null
    };
  }
  if (!isObject(raw)) {
    throw new BundleError(`panes.${id} should be an object`);
  }
  const text = raw['text'];
  if (text !== null && text !== undefined && typeof text !== 'string') {
    throw new BundleError(`panes.${id}.text should be a string or null`);
  }
  const first = raw['first_line'];
  const firstLine = typeof first === 'number' && Number.isInteger(first) && first >= 1 ? first : 1;
  const missing = typeof raw['missing'] === 'string' ? raw['missing'] : null;
  return {
    text: typeof text === 'string' ? text : null,
    missing: typeof text === 'string' ? null : missing ?? 'not available',
    firstLine,
    numbers: null,
    shown: null,
    filename: typeof raw['filename'] === 'string' ? raw['filename'] : null
  };
}

function isRow(row: Json): row is PythonRow {
  if (!Array.isArray(row) || row.length !== 2 || typeof row[1] !== 'string') {
    return false;
  }
  const line = row[0];
  return line === null || (typeof line === 'number' && Number.isInteger(line) && line >= 1);
}

/**
 * The python pane as the bundle's `python_rows` give it (the kernel and the
 * device functions that produced code in it, gaps between them), or `pane`
 * itself for a bundle without them (older bundles: the kernel's text only).
 */
function readPythonRows(rows: Json | undefined, pane: PaneText, shown?: Json): PaneText {
  if (rows === undefined || rows === null) {
    return pane;
  }
  if (!Array.isArray(rows)) {
    throw new BundleError('python_rows should be a list of [line number or null, text] rows');
  }
  rows.forEach((row, i) => {
    if (!isRow(row)) {
      throw new BundleError(`python_rows[${i}] should be [line number or null, text]`);
    }
  });
  const valid = rows as PythonRow[];
  if (valid.length === 0) {
    return pane;
  }
  return {
    text: valid.map(([, text]) => text).join('\n'),
    missing: null,
    firstLine: pane.firstLine,
    numbers: valid.map(([line]) => line),
    shown: readShownNumbers(shown, valid.length),
    filename: pane.filename
  };
}

/** `python_row_numbers`: one line number (or null) per python row, or null when absent. */
function readShownNumbers(shown: Json | undefined, rowCount: number): (number | null)[] | null {
  if (shown === undefined || shown === null) {
    return null;
  }
  const ok = Array.isArray(shown) && shown.length === rowCount && shown.every(
    n => n === null || (typeof n === 'number' && Number.isInteger(n) && n >= 1));
  if (!ok) {
    throw new BundleError('python_row_numbers should be a line number or null per python row');
  }
  return shown as (number | null)[];
}

/**
 * The file/cell line number shown for each row of `pane` (`rowCount` rows):
 * its `numbers`, else `firstLine`, `firstLine + 1`, ...
 */
export function rowNumbers(pane: PaneText, rowCount: number): (number | null)[] {
  if (pane.numbers !== null) {
    return pane.numbers.slice(0, rowCount);
  }
  return Array.from({ length: rowCount }, (_, i) => pane.firstLine + i);
}

function readLineLists(obj: JsonObject, where: string): LineValues<number[]> {
  const out: LineValues<number[]> = new Map();
  for (const [key, value] of Object.entries(obj)) {
    if (!Array.isArray(value) || !value.every(v => typeof v === 'number' && Number.isInteger(v))) {
      throw new BundleError(`${where}["${key}"] should be a list of line numbers`);
    }
    const line = lineNumber(key, where);
    if (line !== null) {
      out.set(line, value as number[]);
    }
  }
  return out;
}

function readNumbers(obj: JsonObject, where: string): LineValues<number> {
  const out: LineValues<number> = new Map();
  for (const [key, value] of Object.entries(obj)) {
    if (typeof value !== 'number' || !Number.isFinite(value)) {
      throw new BundleError(`${where}["${key}"] should be a number`);
    }
    const line = lineNumber(key, where);
    if (line !== null) {
      out.set(line, value);
    }
  }
  return out;
}

const HEX_COLOR = /^#(?:[0-9a-fA-F]{3,4}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})$/;

function readColors(obj: JsonObject): LineValues<string> {
  const out: LineValues<string> = new Map();
  for (const [key, value] of Object.entries(obj)) {
    // Only plain hex colours reach a style property; anything else is dropped
    // and the line falls back to the renderer's palette.
    const line = lineNumber(key, 'colors');
    if (line !== null && typeof value === 'string' && HEX_COLOR.test(value)) {
      out.set(line, value);
    }
  }
  return out;
}

function readScalars(obj: JsonObject): Record<string, string | number> {
  const out: Record<string, string | number> = {};
  for (const [key, value] of Object.entries(obj)) {
    if (typeof value === 'string' || typeof value === 'number') {
      out[key] = value;
    } else if (typeof value === 'boolean') {
      out[key] = String(value);
    }
  }
  return out;
}

function stringAt(obj: JsonObject, key: string, where: string): string {
  const value = obj[key];
  if (typeof value !== 'string') {
    throw new BundleError(`${where}.${key} should be a string`);
  }
  return value;
}

function optionalString(obj: JsonObject, key: string, where: string): string | null {
  const value = obj[key];
  if (value === undefined || value === null) {
    return null;
  }
  if (typeof value !== 'string') {
    throw new BundleError(`${where}.${key} should be a string or null`);
  }
  return value;
}

function stringRows(value: Json | undefined, width: number, where: string): string[][] {
  if (!Array.isArray(value) || !value.every(
    r => Array.isArray(r) && r.length === width && r.every(c => typeof c === 'string'))) {
    throw new BundleError(`${where} should be a list of ${width} strings per row`);
  }
  return value as string[][];
}

function stringList(value: Json | undefined, where: string): string[] {
  if (value === undefined || value === null) {
    return [];
  }
  if (!Array.isArray(value) || !value.every(v => typeof v === 'string')) {
    throw new BundleError(`${where} should be a list of strings`);
  }
  return value as string[];
}

function readViewResources(raw: Json | undefined): ViewResources | null {
  if (raw === undefined || raw === null) {
    return null;
  }
  if (!isObject(raw)) {
    throw new BundleError('view.resources should be an object or null');
  }
  if (raw['missing'] !== undefined) {
    return { missing: stringAt(raw, 'missing', 'view.resources') };
  }
  return {
    arch: stringAt(raw, 'arch', 'view.resources'),
    rows: stringRows(raw['rows'], 2, 'view.resources.rows') as [string, string][],
    warnings: stringList(raw['warnings'], 'view.resources.warnings')
  };
}

function readViewDiff(raw: Json | undefined): ViewDiff | null {
  if (raw === undefined || raw === null) {
    return null;
  }
  if (!isObject(raw)) {
    throw new BundleError('view.diff should be an object or null');
  }
  if (raw['missing'] !== undefined) {
    return { missing: stringAt(raw, 'missing', 'view.diff') };
  }
  const blocks = raw['blocks'];
  if (!Array.isArray(blocks)) {
    throw new BundleError('view.diff.blocks should be a list');
  }
  return {
    aLabel: stringAt(raw, 'a_label', 'view.diff'),
    bLabel: stringAt(raw, 'b_label', 'view.diff'),
    rows: stringRows(raw['rows'], 3, 'view.diff.rows') as [string, string, string][],
    blocks: blocks.map((b, i) => {
      const where = `view.diff.blocks[${i}]`;
      if (!isObject(b)) {
        throw new BundleError(`${where} should be an object`);
      }
      return {
        title: stringAt(b, 'title', where),
        summary: stringAt(b, 'summary', where),
        open: b['open'] === true,
        lines: stringList(b['lines'], `${where}.lines`)
      };
    })
  };
}

/** The bundle's `view` record, or null in a bundle without one (every pane is shown). */
export function readView(raw: Json | undefined): ViewSpec | null {
  if (raw === undefined || raw === null) {
    return null;
  }
  if (!isObject(raw) || !Array.isArray(raw['panes'])) {
    throw new BundleError('view should be an object with a panes list');
  }
  const panes = (raw['panes'] as Json[]).map((p, i) => {
    const where = `view.panes[${i}]`;
    if (!isObject(p)) {
      throw new BundleError(`${where} should be an object`);
    }
    return {
      key: stringAt(p, 'key', where),
      slot: stringAt(p, 'slot', where),
      title: stringAt(p, 'title', where),
      language: stringAt(p, 'language', where),
      variantOf: optionalString(p, 'variant_of', where),
      open: p['open'] !== false,
      absent: optionalString(p, 'absent', where)
    };
  });
  return { panes, resources: readViewResources(raw['resources']), diff: readViewDiff(raw['diff']) };
}

/**
 * Validate `data` (the bundle as JupyterLab hands it over) and return it
 * typed.  Throws `BundleError` when a field has the wrong shape.
 */
export function parseBundle(data: unknown): KernelBundle {
  if (!isObject(data)) {
    throw new BundleError('the bundle should be a JSON object');
  }
  const version = data['version'];
  if (version !== 1) {
    throw new BundleError(`unsupported bundle version ${JSON.stringify(version)} (this renderer reads version 1)`);
  }
  const panes = objectAt(data, 'panes', 'bundle');
  const lineMap = objectAt(data, 'line_map', 'bundle');
  const heat = objectAt(data, 'heat', 'bundle');
  const sassHeat = objectAt(objectAt(data, 'pane_heat', 'bundle'), 'sass', 'pane_heat');
  const unopt = readPane(panes, 'llvm_unoptimized');
  const opt = data['opt'];
  return {
    version,
    name: typeof data['name'] === 'string' ? data['name'] : 'kernel',
    arch: typeof data['arch'] === 'string' ? data['arch'] : '',
    opt: typeof opt === 'number' ? opt : null,
    flags: Array.isArray(data['flags'])
      ? (data['flags'] as unknown[]).filter((f): f is string => typeof f === 'string')
      : [],
    panes: {
      python: readPythonRows(data['python_rows'], readPane(panes, 'python'),
        data['python_row_numbers']),
      llvm: readPane(panes, 'llvm'),
      ptx: readPane(panes, 'ptx'),
      sass: readPane(panes, 'sass')
    },
    llvmUnoptimized: unopt.text,
    lineMap: {
      llvm: readLineLists(objectAt(lineMap, 'llvm', 'line_map'), 'line_map.llvm'),
      ptx: readLineLists(objectAt(lineMap, 'ptx', 'line_map'), 'line_map.ptx'),
      sass: readLineLists(objectAt(lineMap, 'sass', 'line_map'), 'line_map.sass')
    },
    colors: readColors(objectAt(data, 'colors', 'bundle')),
    resources: readScalars(objectAt(data, 'resources', 'bundle')),
    occupancy: readScalars(objectAt(data, 'occupancy', 'bundle')),
    heat: {
      instructions: readNumbers(objectAt(heat, 'instructions', 'heat'), 'heat.instructions'),
      liveRegisters: readNumbers(objectAt(heat, 'live_registers', 'heat'), 'heat.live_registers')
    },
    paneHeat: {
      sass: {
        liveRegisters: readNumbers(objectAt(sassHeat, 'live_registers', 'pane_heat.sass'),
          'pane_heat.sass.live_registers')
      }
    },
    view: readView(data['view'])
  };
}
