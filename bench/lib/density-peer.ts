// The density peer (bench/peers/density_peer.py: HDBSCAN* on numpy) run as a child process on
// Debian's Python over a file of post vectors the bench writes; Debian's python3-sklearn brings the
// numpy it needs (ensureSklearn installs it where it may, or says what to install).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { PEERS_DIR } from '../peer-install.ts';
import { ensureSklearn } from './topic-peers.ts';

const PYTHON = '/usr/bin/python3';

interface DensityResult {
  minClusterSize: number;
  /** Cluster per row of the vectors, -1: noise. */
  labels: number[];
  ms: number;
}

/**
 * HDBSCAN of `vectors` (rows x dim, unit length) at min_samples `minSamples` for each
 * min_cluster_size (one spanning tree, condensed once per size); `scratch` holds the vectors file.
 */
export function runDensityPeer(
  vectors: Float32Array,
  dim: number,
  minSamples: number,
  minClusterSizes: number[],
  scratch: string,
): { version: string; treeMs: number; results: DensityResult[] } {
  ensureSklearn();
  const file = path.join(scratch, 'density-peer-vectors.f32');
  fs.writeFileSync(file, new Uint8Array(vectors.buffer, vectors.byteOffset, vectors.byteLength));
  try {
    const r = spawnSync(PYTHON, [path.join(PEERS_DIR, 'density_peer.py')], {
      input: JSON.stringify({ vectors: file, dim, min_samples: minSamples, min_cluster_sizes: minClusterSizes }),
      maxBuffer: 1 << 30,
      encoding: 'utf8',
    });
    if (r.status !== 0) throw new Error(`density peer failed (exit ${r.status}): ${r.stderr.slice(-2000)}`);
    const out = JSON.parse(r.stdout) as {
      version: string;
      ms_tree: number;
      results: Array<{ min_cluster_size: number; labels: number[]; ms: number }>;
    };
    return {
      version: out.version,
      treeMs: out.ms_tree,
      results: out.results.map((x) => ({ minClusterSize: x.min_cluster_size, labels: x.labels, ms: x.ms })),
    };
  } finally {
    fs.rmSync(file, { force: true });
  }
}
