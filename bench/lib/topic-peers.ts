// The topic-model peers (bench/peers/topic_peers.py: scikit-learn's TF-IDF + k-means, NMF, LDA),
// run as a child process on Debian's Python with Debian's scikit-learn. PyPI is out of reach on
// this machine's kind, Debian's archive is not: the bench installs python3-sklearn when it is
// missing and it may (root, apt-get present), and says what to install otherwise.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { PEERS_DIR } from '../peer-install.ts';

const PYTHON = '/usr/bin/python3';

type TopicMethod = 'kmeans' | 'nmf' | 'lda' | 'ppmi' | 'ppmi_bg' | 'supervised_words' | 'supervised_chars';

export interface TopicRun {
  method: TopicMethod;
  k: number;
  seed: number;
}

interface TopicResult extends TopicRun {
  assignment: number[];
  ms: number;
}

function hasSklearn(): boolean {
  return spawnSync(PYTHON, ['-c', 'import sklearn'], { stdio: 'ignore' }).status === 0;
}

export function ensureSklearn(): void {
  if (hasSklearn()) return;
  const root = process.getuid?.() === 0;
  if (root && spawnSync('apt-get', ['--version'], { stdio: 'ignore' }).status === 0) {
    process.stderr.write('bench: installing Debian python3-sklearn for the topic-model peers ...\n');
    const r = spawnSync('apt-get', ['install', '-y', '-q', 'python3-sklearn'], {
      stdio: ['ignore', 'ignore', 2],
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
    if (r.status === 0 && hasSklearn()) return;
  }
  throw new Error(
    `the topic-model peers need scikit-learn for ${PYTHON}: install Debian's python3-sklearn (apt-get install python3-sklearn)`,
  );
}

/**
 * `background`: texts the word-space peer (ppmi_bg) also fits its word vectors on; `labels`: the
 * true label of each text, for the supervised references only (trained and scored out of fold).
 */
export function runTopicPeers(
  texts: readonly string[],
  runs: readonly TopicRun[],
  background: readonly string[] = [],
  labels?: readonly string[],
): { version: string; results: TopicResult[] } {
  ensureSklearn();
  const r = spawnSync(PYTHON, [path.join(PEERS_DIR, 'topic_peers.py')], {
    input: JSON.stringify({ texts, runs, background, labels }),
    maxBuffer: 1 << 30,
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`topic peers failed (exit ${r.status}): ${r.stderr.slice(-2000)}`);
  return JSON.parse(r.stdout) as { version: string; results: TopicResult[] };
}
