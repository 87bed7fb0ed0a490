/**
 * Bundle validation, the line links and the PTX instruction table
 * (node:test; run with `jlpm test`).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { BundleError, parseBundle, rowNumbers } from '../src/bundle';
import { LineLinks } from '../src/linemap';
import { countWords } from '../src/pane';
import { describeInstruction } from '../src/ptxdocs';

function sample(): Record<string, unknown> {
  return {
    version: 1,
    name: 'saxpy',
    arch: 'sm_90',
    opt: 3,
    panes: {
      python: { text: 'def saxpy(a):\n    i = wl.tid()\n    y[i] = a', first_line: 12 },
      llvm: { text: 'a\nb\nc' },
      ptx: { text: 'p1\np2\np3\np4' },
      sass: { text: null, missing: 'no nvdisasm' }
    },
    line_map: { llvm: { '13': [1, 2] }, ptx: { '13': [2, 3], '14': [3], '0': [4] }, sass: {} },
    colors: { '13': '#e6194b33', '14': 'url(javascript:alert(1))' },
    heat: { instructions: { '14': 4096 } }
  };
}

test('a valid bundle is read with typed maps; line 0 is dropped', () => {
  const b = parseBundle(sample());
  assert.equal(b.panes.python.firstLine, 12);
  assert.equal(b.panes.sass.text, null);
  assert.equal(b.panes.sass.missing, 'no nvdisasm');
  assert.deepEqual([...b.lineMap.ptx.entries()], [
    [13, [2, 3]],
    [14, [3]]
  ]);
  assert.equal(b.heat.instructions.get(14), 4096);
  assert.equal(b.llvmUnoptimized, null);
});

test('only hex colours are kept', () => {
  const b = parseBundle(sample());
  assert.deepEqual([...b.colors.entries()], [[13, '#e6194b33']]);
});

test('malformed bundles raise BundleError naming the field', () => {
  assert.throws(() => parseBundle([]), BundleError);
  assert.throws(() => parseBundle({ ...sample(), version: 2 }), /unsupported bundle version 2/);
  const badMap = { ...sample(), line_map: { ptx: { '13': 'forty' } } };
  assert.throws(() => parseBundle(badMap), /line_map\.ptx\["13"\] should be a list of line numbers/);
  const badKey = { ...sample(), line_map: { ptx: { x: [1] } } };
  assert.throws(() => parseBundle(badKey), /line key "x" is not a line number/);
  const badText = { ...sample(), panes: { python: { text: 3 } } };
  assert.throws(() => parseBundle(badText), /panes\.python\.text should be a string or null/);
});

test('line links go both ways; the python pane is offset by first_line', () => {
  const links = new LineLinks(parseBundle(sample()));
  assert.deepEqual(links.paneLinesOf('ptx', 13), [2, 3]);
  assert.deepEqual(links.pythonLinesOf('ptx', 3), [13, 14]);
  assert.deepEqual(links.pythonLinesOf('python', 2), [13]);
  assert.deepEqual(links.paneLinesOf('python', 14), [3]);
  assert.deepEqual(links.pythonLinesOf('sass', 1), []);
  assert.equal(links.colorOf(13), '#e6194b33');
  // line 14 had an unsafe colour: it gets one from the palette instead
  assert.match(links.colorOf(14) ?? '', /^#[0-9a-f]{8}$/);
  assert.equal(links.colorOfPaneLine('ptx', 2), '#e6194b33');
  assert.equal(links.colorOf(15), null);
});

/** A kernel at cell lines 9..10 with a device function at 2..3 above it, a gap between. */
function withRows(): Record<string, unknown> {
  return {
    ...sample(),
    panes: { ...(sample().panes as object), python: { text: 'def k(x):', first_line: 9, filename: 'In[4]' } },
    python_rows: [
      [2, 'def helper(v):'],
      [3, '    return v * 2.0  # <b>text</b>'],
      [null, ''],
      [9, 'def k(x):'],
      [10, '    x[0] = helper(x[0])']
    ],
    line_map: { llvm: {}, ptx: { '3': [2], '10': [1, 3] }, sass: {} },
    colors: { '3': '#3cb44b33', '10': '#e6194b33' }
  };
}

test('python_rows replace the python text; a gap row has no line', () => {
  const b = parseBundle(withRows());
  const py = b.panes.python;
  assert.equal(py.text, 'def helper(v):\n    return v * 2.0  # <b>text</b>\n\ndef k(x):\n    x[0] = helper(x[0])');
  assert.deepEqual(py.numbers, [2, 3, null, 9, 10]);
  assert.deepEqual(rowNumbers(py, 5), [2, 3, null, 9, 10]);
  assert.equal(py.filename, 'In[4]');
  // a bundle without python_rows (older ones) numbers the kernel's text from first_line
  const old = parseBundle(sample()).panes.python;
  assert.equal(old.numbers, null);
  assert.deepEqual(rowNumbers(old, 3), [12, 13, 14]);
  assert.equal(old.filename, null);
});

test('line links of python_rows: device-function lines link both ways, gaps to nothing', () => {
  const links = new LineLinks(parseBundle(withRows()));
  assert.deepEqual(links.pythonLinesOf('python', 2), [3]);   // row 2 is helper's line 3
  assert.deepEqual(links.paneLinesOf('python', 3), [2]);
  assert.deepEqual(links.pythonLinesOf('python', 3), []);    // the gap row
  assert.deepEqual(links.pythonLinesOf('python', 4), [9]);
  assert.deepEqual(links.pythonLinesOf('ptx', 2), [3]);      // PTX line 2 came from helper
  assert.deepEqual(links.paneLinesOf('python', 10), [5]);
  assert.equal(links.colorOfPaneLine('python', 2), links.colorOfPaneLine('ptx', 2));
  assert.equal(links.colorOfPaneLine('python', 3), null);
});

test('a device function of another cell: rows keyed per file, shown with its own numbers', () => {
  const data = {
    ...withRows(),
    python_rows: [
      [9, 'def k(x):'],
      [10, '    x[0] = helper(x[0])'],
      [null, '# In[2]'],
      [1000002, 'def helper(v):'],
      [1000003, '    return v * 2.0']
    ],
    python_row_numbers: [9, 10, null, 2, 3],
    line_map: { llvm: {}, ptx: { '1000003': [2], '10': [1, 3] }, sass: {} },
    colors: { '1000003': '#3cb44b33', '10': '#e6194b33' }
  };
  const b = parseBundle(data);
  assert.deepEqual(b.panes.python.shown, [9, 10, null, 2, 3]);
  assert.deepEqual(rowNumbers(b.panes.python, 5), [9, 10, null, 1000002, 1000003]);
  const links = new LineLinks(b);
  assert.deepEqual(links.pythonLinesOf('python', 5), [1000003]);  // row 5: helper's line 3
  assert.deepEqual(links.pythonLinesOf('ptx', 2), [1000003]);
  assert.equal(links.colorOfPaneLine('python', 5), links.colorOfPaneLine('ptx', 2));
  assert.equal(parseBundle(withRows()).panes.python.shown, null);
  for (const bad of ['x', [9, 10], [9, 10, null, 2, 0]]) {
    assert.throws(() => parseBundle({ ...data, python_row_numbers: bad }),
      /python_row_numbers should be a line number or null per python row/, JSON.stringify(bad));
  }
});

test('malformed python_rows raise BundleError naming the row', () => {
  assert.throws(() => parseBundle({ ...sample(), python_rows: 'x' }), /python_rows should be a list/);
  for (const bad of [[0, 'a'], [1.5, 'a'], ['3', 'a'], [3], [3, 4], [null, null]]) {
    assert.throws(() => parseBundle({ ...sample(), python_rows: [[1, 'ok'], bad] }),
      /python_rows\[1\] should be \[line number or null, text\]/, JSON.stringify(bad));
  }
});

test('PTX instruction docs: sections by operand type, opcode-specific modifiers', () => {
  const mul = describeInstruction('mul.wide.s32');
  assert.equal(mul?.section, 'Integer Arithmetic Instructions: mul');
  assert.deepEqual(mul?.modifiers, [
    { name: 'wide', text: 'result twice as wide as the inputs' },
    { name: 's32', text: '32-bit signed integer' }
  ]);
  assert.equal(describeInstruction('fma.rn.f32')?.section, 'Floating-Point Instructions: fma');
  assert.equal(describeInstruction('add.rn.f32')?.section, 'Floating-Point Instructions: add');
  assert.equal(describeInstruction('add.s64')?.section, 'Integer Arithmetic Instructions: add');
  const setp = describeInstruction('setp.lt.and.s32');
  assert.equal(setp?.modifiers[1].text, 'combine the comparison with a predicate operand by AND');
  const atom = describeInstruction('atom.global.and.b32');
  assert.equal(atom?.modifiers[1].text, 'operation: AND');
  assert.equal(describeInstruction('bar.sync')?.modifiers[0].text, 'arrive and wait');
  assert.equal(describeInstruction('shfl.sync.bfly.b32')?.section,
    'Data Movement and Conversion Instructions: shfl');
  assert.equal(describeInstruction('f16x2.foo'), null);
  assert.equal(describeInstruction('cvt.rn.f16x2.f32')?.modifiers[1].text, '16-bit IEEE floating point, packed pair');
});

test('compile flags are read as strings; an older bundle without them has none', () => {
  assert.deepEqual(parseBundle(sample()).flags, []);
  const b = parseBundle({ ...sample(), flags: ['debug', 7, 'maxrregcount=64'] });
  assert.deepEqual(b.flags, ['debug', 'maxrregcount=64']);
});

test('pane_heat gives the SASS pane live registers per SASS line; absent, the map is empty', () => {
  const b = parseBundle({ ...sample(), pane_heat: { sass: { live_registers: { '3': 7, '5': 12 } } } });
  assert.deepEqual([...b.paneHeat.sass.liveRegisters.entries()], [
    [3, 7],
    [5, 12]
  ]);
  assert.equal(parseBundle(sample()).paneHeat.sass.liveRegisters.size, 0);
  assert.throws(() => parseBundle({ ...sample(), pane_heat: { sass: { live_registers: { '3': 'x' } } } }),
    /pane_heat\.sass\.live_registers\["3"\] should be a number/);
  assert.throws(() => parseBundle({ ...sample(), pane_heat: [] }), /bundle\.pane_heat should be an object/);
});

test('pane header counts say the unit as the static view does (1 instruction, 1,234 lines)', () => {
  assert.equal(countWords(1, 'instructions'), '1 instruction');
  assert.equal(countWords(22, 'instructions'), '22 instructions');
  assert.equal(countWords(1234, 'lines'), '1,234 lines');
  assert.equal(countWords(0, 'lines'), '0 lines');
});
