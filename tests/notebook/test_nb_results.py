"""LaunchResult rich output built from the runtime's real records."""

from warp_lab.runtime.device import SIMULATOR, DeviceInfo
from warp_lab.runtime.result import LaunchResult
from warp_lab.notebook.results import LaunchView, launch_html

from nb_htmlparse import parse_view
from nb_records import saxpy_record

H200 = DeviceInfo("cuda", 0, "NVIDIA H200", "sm_90", sm_count=132,
                  memory_clock_khz=2_619_000, bus_width_bits=6144)


def test_gpu_result_shows_times_bandwidth_against_peak():
    ck = saxpy_record()
    times = tuple(1e-5 * (1 + 0.01 * k) for k in range(20))
    r = LaunchResult(ck, H200, (4, 1, 1), (256, 1, 1), (1024, 1, 1), times,
                     argument_bytes=3 * 4 * 1024 * 1024, printed="x < y & z\n")
    markup = launch_html(r)
    bw = r.bandwidth
    peak = H200.peak_bandwidth
    assert f"achieved {bw / 1e9:.1f} GB/s" in markup
    assert f"({100 * bw / peak:.0f}% of the {peak / 1e9:.0f} GB/s peak)" in markup
    assert markup.count("data:image/png;base64,") == 1  # the time distribution
    assert "x &lt; y &amp; z" in markup  # printed output, escaped
    assert "compile stages: ptx 2.0 ms, ptxas 10.0 ms" in markup


def test_single_gpu_launch_has_no_distribution_chart():
    r = LaunchResult(saxpy_record(), H200, (1, 1, 1), (32, 1, 1), (32, 1, 1), (1e-5,), 256)
    assert "data:image/png" not in launch_html(r)


def test_launch_view_bundle():
    r = LaunchResult(saxpy_record(), SIMULATOR, (1, 1, 1), (32, 1, 1), (32, 1, 1), (1e-3,), 256,
                     notes=("note <b>",))
    data = LaunchView(r)._repr_mimebundle_()
    assert data["text/plain"].startswith("<LaunchResult saxpy")
    assert "note &lt;b&gt;" in data["text/html"]
    assert parse_view(data["text/html"]).scripts == []
