// Batch driver for the CUDA toolkit's occupancy calculator (cuda_occupancy.h),
// used by tests/analysis to check warp_lab.analysis.occupancy against it.
// Reads one query per line on stdin, writes one answer line per query:
//
//   O <props:12> <func:8> <state:2> <blockSize> <dynamicSmem>
//     -> status active limitingFactors limRegs limSmem limWarps limBlocks
//        limBarriers limVirtual allocRegsPerBlock allocSmemPerBlock gcConfig
//   S <props:12> <func:8> <state:2> <dynamicSmem> <dynamicSmemPerThread>
//     -> status minGridSize blockSize
//   D <props:12> <func:8> <state:2> <numBlocks> <blockSize>
//     -> status availableDynamicSmemPerBlock
//   A <major> <minor>
//     -> smemGranularity regMaxPerThread regGranularity subPartitions
//        maxBlocks gcSupport virtualPerSM barriersPerBlockSlot nConfigs configs...
//
// props: major minor maxThreadsPerBlock maxThreadsPerSM regsPerBlock regsPerSM
//        warpSize smemPerBlock smemPerSM numSms smemPerBlockOptin reservedSmemPerBlock
// func:  maxThreadsPerBlock numRegs sharedSizeBytes partitionedGCConfig
//        shmemLimitConfig maxDynamicSharedSizeBytes numBlockBarriers virtualResourceCount
// state: cacheConfig carveoutConfig
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <sstream>
#include "cuda_occupancy.h"

static size_t g_dyn_const = 0, g_dyn_per_thread = 0;
static size_t dyn_of_block(int block_size) { return g_dyn_const + g_dyn_per_thread * block_size; }

static void read_inputs(std::istringstream &in, cudaOccDeviceProp &p,
                        cudaOccFuncAttributes &f, cudaOccDeviceState &s) {
    long long v[22];
    for (int i = 0; i < 22; ++i) in >> v[i];
    p.computeMajor = (int)v[0]; p.computeMinor = (int)v[1];
    p.maxThreadsPerBlock = (int)v[2]; p.maxThreadsPerMultiprocessor = (int)v[3];
    p.regsPerBlock = (int)v[4]; p.regsPerMultiprocessor = (int)v[5]; p.warpSize = (int)v[6];
    p.sharedMemPerBlock = (size_t)v[7]; p.sharedMemPerMultiprocessor = (size_t)v[8];
    p.numSms = (int)v[9]; p.sharedMemPerBlockOptin = (size_t)v[10];
    p.reservedSharedMemPerBlock = (size_t)v[11];
    f.maxThreadsPerBlock = (int)v[12]; f.numRegs = (int)v[13]; f.sharedSizeBytes = (size_t)v[14];
    f.partitionedGCConfig = (cudaOccPartitionedGCConfig)v[15];
    f.shmemLimitConfig = (cudaOccFuncShmemConfig)v[16];
    f.maxDynamicSharedSizeBytes = (size_t)v[17]; f.numBlockBarriers = (int)v[18];
    f.virtualResourceCount = (int)v[19];
    s.cacheConfig = (cudaOccCacheConfig)v[20]; s.carveoutConfig = (int)v[21];
}

int main() {
    std::ios::sync_with_stdio(false);
    std::string line;
    while (std::getline(std::cin, line)) {
        std::istringstream in(line);
        std::string cmd;
        in >> cmd;
        cudaOccDeviceProp p;
        cudaOccFuncAttributes f;
        cudaOccDeviceState s;
        if (cmd == "O") {
            read_inputs(in, p, f, s);
            long long block, dyn;
            in >> block >> dyn;
            cudaOccResult r;
            memset(&r, 0, sizeof r);
            cudaOccError e = cudaOccMaxActiveBlocksPerMultiprocessor(&r, &p, &f, &s, (int)block, (size_t)dyn);
            std::cout << e << ' ' << r.activeBlocksPerMultiprocessor << ' ' << r.limitingFactors << ' '
                      << r.blockLimitRegs << ' ' << r.blockLimitSharedMem << ' ' << r.blockLimitWarps << ' '
                      << r.blockLimitBlocks << ' ' << r.blockLimitBarriers << ' ' << r.blockLimitVirtual << ' '
                      << r.allocatedRegistersPerBlock << ' ' << r.allocatedSharedMemPerBlock << ' '
                      << r.partitionedGCConfig << '\n';
        } else if (cmd == "S") {
            read_inputs(in, p, f, s);
            long long dyn, per_thread;
            in >> dyn >> per_thread;
            int min_grid = 0, block = 0;
            cudaOccError e;
            if (per_thread) {
                g_dyn_const = (size_t)dyn; g_dyn_per_thread = (size_t)per_thread;
                e = cudaOccMaxPotentialOccupancyBlockSize(&min_grid, &block, &p, &f, &s, dyn_of_block, 0);
            } else {
                e = cudaOccMaxPotentialOccupancyBlockSize(&min_grid, &block, &p, &f, &s, (size_t)dyn);
            }
            std::cout << e << ' ' << min_grid << ' ' << block << '\n';
        } else if (cmd == "D") {
            read_inputs(in, p, f, s);
            long long blocks, block;
            in >> blocks >> block;
            size_t bytes = 0;
            cudaOccError e = cudaOccAvailableDynamicSMemPerBlock(&bytes, &p, &f, &s, (int)blocks, (int)block);
            std::cout << e << ' ' << bytes << '\n';
        } else if (cmd == "A") {
            in >> p.computeMajor >> p.computeMinor;
            int gran = 0, regmax = 0, reggran = 0, subp = 0, blocks = 0, virt = 0, bars = 0;
            cudaOccPartitionedGCSupport gc;
            cudaOccSMemAllocationGranularity(&gran, &p);
            cudaOccRegAllocationMaxPerThread(&regmax, &p);
            cudaOccRegAllocationGranularity(&reggran, &p);
            cudaOccSubPartitionsPerMultiprocessor(&subp, &p);
            cudaOccMaxBlocksPerMultiprocessor(&blocks, &p);
            cudaOccPartitionedGlobalCachingModeSupport(&gc, &p);
            cudaOccMaxVirtualResourceCountPerSM(&virt, &p);
            f.numBlockBarriers = 1;
            cudaOccMaxBlocksPerSMBlockBarrierLimit(&bars, 1, &p, &f);
            // every carveout size the SM can be set to (Volta and newer)
            std::ostringstream configs;
            int n = 0;
            size_t last = (size_t)-1;
            for (size_t size = 0; p.computeMajor >= 7 && size <= 400 * 1024; size += (size ? 1024 : 1)) {
                size_t aligned = size;
                if (cudaOccAlignUpShmemSizeVoltaPlus(&aligned, &p) != CUDA_OCC_SUCCESS) break;
                if (aligned != last) { configs << ' ' << aligned; last = aligned; ++n; }
            }
            std::cout << gran << ' ' << regmax << ' ' << reggran << ' ' << subp << ' ' << blocks << ' '
                      << gc << ' ' << virt << ' ' << bars << ' ' << n << configs.str() << '\n';
        } else {
            std::cout << "?\n";
        }
    }
    return 0;
}
