"""wl.diff on two real compiles that differ in one instruction."""

import dataclasses

from warp_lab.notebook.diff import diff

from nb_records import saxpy_record


def test_diff_of_identical_kernels_is_empty():
    ck = saxpy_record()
    d = diff(ck, ck)
    assert d.unchanged and "unchanged" in str(d)
    assert d.a_label.endswith("(previous)")


def test_diff_shows_changed_ptx_and_registers():
    a = saxpy_record()
    b = dataclasses.replace(
        a, ptx=a.ptx.replace("add.rn.f32", "sub.rn.f32"),
        resources=dataclasses.replace(a.resources, registers=a.resources.registers + 8),
        options=dataclasses.replace(a.options, opt=1))
    d = diff(a, b)
    assert [x for x in d.ptx if x.startswith("-\t")] == [x for x in d.ptx if "-\tadd.rn.f32" in x]
    assert any(x.startswith("+\tsub.rn.f32") for x in d.ptx)
    assert ("registers", a.resources.registers, a.resources.registers + 8) in d.resources
    assert ("opt", 3, 1) in d.options
    assert d.sass == ()
    markup = d._repr_html_()
    assert "SASS: unchanged" in markup and "PTX: +1 -1 lines" in markup
    assert 'class="wl-line wl-add"' in markup


def test_a_large_diff_starts_collapsed_a_small_one_open():
    from warp_lab.notebook.diff import OPEN_DIFF_MAX_LINES

    a = saxpy_record()
    small = diff(a, dataclasses.replace(a, ptx=a.ptx.replace("add.rn.f32", "sub.rn.f32")))
    assert '<details class="wl-pane" open><summary>PTX: +1 -1 lines</summary>' in \
        small._repr_html_()
    extra = "".join(f"\tmov.u32 \t%r{k}, {k};\n" for k in range(OPEN_DIFF_MAX_LINES + 1))
    big = diff(a, dataclasses.replace(a, ptx=a.ptx + extra))
    n = OPEN_DIFF_MAX_LINES + 1
    markup = big._repr_html_()
    assert (f'<details class="wl-pane"><summary>PTX: +{n} -0 lines (collapsed: click to show)'
            "</summary>") in markup
    assert markup.count('class="wl-line wl-add"') == n     # all there, only folded


def test_sass_offsets_do_not_count_as_changes():
    a = saxpy_record()
    shifted = a.sass.replace("/*0000*/", "/*0010*/")
    d = diff(a, dataclasses.replace(a, sass=shifted))
    assert d.sass == ()


def test_diff_of_real_compiles_at_two_optimisation_levels():
    import linecache

    import warp_lab as wl

    src = ("def poly(x: wl.array(dtype=wl.float32)):\n    i = wl.tid()\n"
           "    x[i] = x[i] * x[i] + 2.0 * x[i] + 1.0\n")
    linecache.cache["<diff test>"] = (len(src), None, src.splitlines(True), "<diff test>")
    ns = {"wl": wl}
    exec(compile(src, "<diff test>", "exec"), ns)
    k = wl.kernel(ns["poly"])
    a, b = wl.compile(k, opt=0), wl.compile(k, opt=3)
    d = wl.diff(a, b)
    assert ("opt", 0, 3) in d.options
    assert d.ptx and not d.unchanged
    removed = sum(1 for x in d.ptx if x.startswith("-") and not x.startswith("---"))
    assert removed > 0
    assert "diff: poly sm_90 -O0 → poly sm_90 -O3" in d._repr_html_()


def test_rerunning_the_same_cell_is_no_change():
    # re-running a cell compiles the same kernel under the next cell name: PTX's .file
    # directive names it, which is no change of the code
    a = saxpy_record()
    assert '.file\t1 "./<cell 1>"' in a.ptx
    b = dataclasses.replace(a, ptx=a.ptx.replace('"./<cell 1>"', '"./<cell 7>"'))
    assert diff(a, b).unchanged, diff(a, b).ptx
