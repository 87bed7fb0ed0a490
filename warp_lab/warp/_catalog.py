"""The public names of NVIDIA Warp 1.19 (``dir(warp)`` and its kernel builtins,
``warp._src.context.builtin_functions``), listed once so that a Warp name
:mod:`warp_lab.warp` does not have yet is an error naming the feature, not an
``AttributeError``. Generated from warp-lang 1.19.0; data only.
"""

from __future__ import annotations

#: every public name of ``import warp as wp`` 1.19 and every kernel builtin's name
WARP_NAMES = frozenset("""
Allocator Bvh BvhQuery BvhQueryTiled CaptureMode CudaManagedAllocator DeterministicMode
Device DeviceLike E Event Float Function GLTextureResource Graph HALF_PI HashGrid
HashGridQuery INF Int JaxCallableGraphMode JaxModulePreloadMode Kernel LN10 LN2 LOG10E LOG2E
LOG_DEBUG LOG_ERROR LOG_INFO LOG_WARNING Launch Logger MemoryKind Mesh MeshQuery
MeshQueryAABB MeshQueryAABBTiled MeshQueryPoint MeshQueryRay Module ModuleBuildOptions NAN
PHI PI RegisteredGLBuffer Scalar ScopedAllocator ScopedCapture ScopedCudaProfiler
ScopedDevice ScopedLogLevel ScopedLogger ScopedMemoryTracker ScopedMempool
ScopedMempoolAccess ScopedPeerAccess ScopedStream ScopedTimer Stream TAU TIMING_ALL
TIMING_GRAPH TIMING_KERNEL TIMING_KERNEL_BUILTIN TIMING_MEMCPY TIMING_MEMSET Tape Texture
Texture1D Texture2D Texture3D TextureAddressMode TextureFilterMode TextureResourceFlags
TimingResult Volume WarpCodegenAttributeError WarpCodegenError WarpCodegenIndexError
WarpCodegenKeyError WarpCodegenTypeError WarpCodegenValueError WarpDeterminismError abs acos
add add_inplace address address_of argmax argmin array array1d array2d array3d array4d
array_store asin assign assign_copy assign_inplace atan atan2 atomic_add atomic_and
atomic_cas atomic_exch atomic_max atomic_min atomic_or atomic_sub atomic_xor bfloat16
bit_and bit_and_inplace bit_count bit_or bit_or_inplace bit_xor bit_xor_inplace block_dim
bool breakpoint build_experimental bvh_get_group_root bvh_query_aabb bvh_query_aabb_tiled
bvh_query_capsule bvh_query_next bvh_query_next_tiled bvh_query_ray bvh_query_ray_tiled
bvh_query_sphere can_access capture_begin capture_debug_dot_print capture_end capture_if
capture_launch capture_load capture_load_from_bytes capture_save capture_while cast cbrt
ceil clamp clear_jax_callable_graph_cache clear_kernel_cache clear_lto_cache clone
closest_point_edge_edge compile_aot_module config constant copy copysign cos cosh cross
cuda_profiler_start cuda_profiler_stop curlnoise cw_div cw_mul ddot degrees dense_chol
dense_chol_batched dense_gemm dense_gemm_batched dense_solve dense_solve_batched dense_subs
determinant device_from_jax device_from_paddle device_from_torch device_to_jax
device_to_paddle device_to_torch diag div div_approx dot dtype_from_jax dtype_from_numpy
dtype_from_paddle dtype_from_torch dtype_to_jax dtype_to_numpy dtype_to_paddle
dtype_to_torch e eig3 empty empty_like erf erfc erfcinv erfinv event_from_ipc_handle exp
expect_eq expect_near expect_neq extract fabricarray fabricarrayarray fixedarray float
float16 float32 float64 floor floordiv force_load frac from_dlpack from_ipc_handle from_jax
from_numpy from_paddle from_ptr from_torch full full_like func func_grad func_native
func_replay get_cpu_kernel_cache_key get_cuda_device get_cuda_device_count get_cuda_devices
get_cuda_driver_version get_cuda_kernel_properties get_cuda_max_cluster_dim
get_cuda_supported_archs get_cuda_toolkit_version get_device get_device_allocator
get_devices get_diag get_event_elapsed_time get_logger get_mempool_release_threshold
get_mempool_used_mem_current get_mempool_used_mem_high get_module get_module_options
get_preferred_device get_stream get_suggested_block_size grad half_pi handle
hash_grid_point_id hash_grid_query hash_grid_query_next identity index indexedarray
indexedarray1d indexedarray2d indexedarray3d indexedarray4d indexedfabricarray
indexedfabricarrayarray indexref inf init int int16 int32 int64 int8 intersect_tri_tri
inverse inverse_approx invert is_conditional_graph_supported is_cpu_available
is_cubql_available is_cuda_available is_device_available is_mempool_access_enabled
is_mempool_access_supported is_mempool_enabled is_mempool_supported is_peer_access_enabled
is_peer_access_supported isfinite isinf isnan iter_next jax_callable jax_kernel kernel
launch launch_tiled len length length_sq lerp ln10 ln2 load load_aot_module load_module log
log10 log10e log2 log2e lower_bound lshift map map_cuda_device mat22 mat22d mat22f mat22h
mat33 mat33d mat33f mat33h mat44 mat44d mat44f mat44h matrix matrix_from_cols
matrix_from_rows max mesh_eval_face_normal mesh_eval_position mesh_eval_velocity mesh_get
mesh_get_bvh mesh_get_group_root mesh_get_index mesh_get_point mesh_get_velocity
mesh_query_aabb mesh_query_aabb_next mesh_query_aabb_next_tiled mesh_query_aabb_tiled
mesh_query_furthest_point_no_sign mesh_query_next mesh_query_point mesh_query_point_no_sign
mesh_query_point_sign_normal mesh_query_point_sign_parity
mesh_query_point_sign_winding_number mesh_query_ray mesh_query_ray_anyhit
mesh_query_ray_count_intersections mesh_query_sphere min mod mul nan neg noise nonzero
norm_huber norm_l1 norm_l2 norm_pseudo_huber normalize ones ones_like outer overload phi pi
pnoise poisson pos pow print print_diagnostics print_memory_report printf qr3 quat
quat_between_vectors quat_from_axis_angle quat_from_euler quat_from_matrix quat_identity
quat_inverse quat_rotate quat_rotate_inv quat_rpy quat_slerp quat_to_axis_angle
quat_to_euler quat_to_matrix quat_to_rpy quat_twist quat_twist_angle quat_twist_angle_signed
quatd quaternion quatf quath radians rand_init randf randi randn randu range record_event
ref reversed rint round rshift sample_cdf sample_triangle sample_unit_cube sample_unit_disk
sample_unit_hemisphere sample_unit_hemisphere_surface sample_unit_ring sample_unit_sphere
sample_unit_sphere_surface sample_unit_square select set_cuda_allocator set_device
set_device_allocator set_logger set_mempool_access_enabled set_mempool_enabled
set_mempool_release_threshold set_module_options set_peer_access_enabled set_stream sign sin
sinh skew slice smooth_normalize smoothstep spatial_adjoint spatial_bottom spatial_cross
spatial_cross_dual spatial_dot spatial_matrix spatial_matrixd spatial_matrixf
spatial_matrixh spatial_top spatial_vector spatial_vectord spatial_vectorf spatial_vectorh
sqrt static step store stream_from_paddle stream_from_torch stream_to_torch struct sub
sub_inplace svd2 svd3 synchronize synchronize_device synchronize_event synchronize_stream
tan tanh tau texture_sample tid tile tile_add_inplace tile_arange tile_argmax tile_argmin
tile_assign tile_astype tile_atomic_add tile_atomic_add_indexed tile_axpy
tile_bit_and_inplace tile_bit_or_inplace tile_bit_xor_inplace tile_broadcast
tile_bvh_query_aabb tile_bvh_query_next tile_bvh_query_ray tile_cholesky
tile_cholesky_inplace tile_cholesky_solve tile_cholesky_solve_inplace tile_diag_add tile_dot
tile_empty tile_extract tile_fft tile_from_thread tile_full tile_ifft tile_load
tile_load_indexed tile_lower_solve tile_lower_solve_inplace tile_map tile_matmul tile_max
tile_mesh_query_aabb tile_mesh_query_aabb_next tile_min tile_ones tile_query_valid
tile_randf tile_randi tile_reduce tile_reshape tile_scan_exclusive tile_scan_inclusive
tile_scan_max_inclusive tile_scan_min_inclusive tile_scatter_add tile_scatter_masked
tile_slice_indexed tile_sort tile_squeeze tile_stack tile_stack_clear tile_stack_count
tile_stack_pop tile_stack_push tile_store tile_store_indexed tile_sub_inplace tile_sum
tile_transpose tile_upper_solve tile_upper_solve_inplace tile_view tile_zeros timing_begin
timing_end timing_print to_dlpack to_jax to_paddle to_torch trace transform
transform_add_inplace transform_compose transform_decompose transform_expand
transform_from_matrix transform_get_rotation transform_get_translation transform_identity
transform_inverse transform_multiply transform_point transform_set_rotation
transform_set_rotation_copy transform_set_translation transform_set_translation_copy
transform_sub_inplace transform_to_matrix transform_twist transform_vector transform_wrench
transformation transformd transformf transformh transpose trunc tuple types uint16 uint32
uint64 uint8 unmap_cuda_device unot untile utils vec2 vec2b vec2d vec2f vec2h vec2i vec2l
vec2s vec2ub vec2ui vec2ul vec2us vec3 vec3b vec3d vec3f vec3h vec3i vec3l vec3s vec3ub
vec3ui vec3ul vec3us vec4 vec4b vec4d vec4f vec4h vec4i vec4l vec4s vec4ub vec4ui vec4ul
vec4us vector velocity_at_point view volume_index_to_world volume_index_to_world_dir
volume_lookup volume_lookup_f volume_lookup_i volume_lookup_index volume_lookup_v
volume_sample volume_sample_f volume_sample_grad volume_sample_grad_f
volume_sample_grad_index volume_sample_i volume_sample_index volume_sample_v volume_store
volume_store_f volume_store_i volume_store_v volume_voxel_count volume_world_to_index
volume_world_to_index_dir wait_event wait_stream where zeros zeros_like
""".split()) - {"print", "range", "len", "int", "float", "tuple", "slice", "reversed"}
# (those are Python's own names, which Warp's kernels call without wp.: not wp. attributes)

#: the feature a name belongs to, by prefix (first match), for the error's wording
_FEATURES = (
    (("mesh_", "Mesh", "closest_point_edge_edge", "intersect_tri_tri"), "meshes"),
    (("volume_", "Volume"), "volumes (NanoVDB)"),
    (("bvh_", "Bvh", "tile_bvh_"), "BVHs"),
    (("Tape", "grad", "func_grad", "func_replay", "adj_"), "autodiff (wp.Tape, gradients)"),
    (("tile", "launch_tiled", "untile"), "tiles"),
    (("hash_grid_", "HashGrid"), "hash grids"),
    (("texture", "Texture"), "textures"),
    (("quat", "transform", "spatial_", "velocity_at_point"),
     "quaternions, transforms and spatial vectors"),
    (("rand", "sample_", "noise", "pnoise", "curlnoise", "poisson"), "random numbers"),
    (("capture_", "Graph", "ScopedCapture"), "CUDA graph capture"),
    (("dense_", "svd", "qr3", "eig3"), "dense linear algebra"),
    (("jax", "torch", "paddle", "dlpack", "ipc_"), "interoperability with other frameworks"),
    (("fabric", "indexed"), "fabric and indexed arrays"),
)


def feature_of(name: str) -> str:
    """What part of Warp ``name`` belongs to (``"meshes"`` for ``mesh_query_point``)."""
    for prefixes, feature in _FEATURES:
        if name.startswith(prefixes):
            return feature
    return "part of Warp's API"
