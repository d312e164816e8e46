// `npm run pipeline -- <command>`: run all stages, one stage, or the schedule.
import { isoInstantOption, parseCliArgs } from '../../core/infra/cli-args.ts';
import { ConfigError, loadConfig } from '../../core/infra/config.ts';
import { dataDirLayout } from '../../core/infra/data-dir.ts';
import { createLogger } from '../../core/infra/log.ts';
import { emptyDataDirProblem } from './empty-data-dir.ts';
import { resolveStages, RewindRefused, runStages } from './runner.ts';
import { startSchedule, validateSchedule } from './schedule.ts';
import { STAGES } from './stage-list.ts';

const HELP = `usage: npm run pipeline -- <command> [--data-dir DIR] [--as-of ISO [--allow-rewind]] [--full] [--init]

commands:
  run          every stage in order: ${STAGES.map((s) => s.name).join(' -> ')}
${STAGES.map((s) => `  ${s.name.padEnd(12)} ${s.description}`).join('\n')}
  schedule     run stages on the node-cron schedule in PIPELINE_SCHEDULE (JSON: stage, "run" or
               "full" -> cron; default '{"run":"0 * * * *","full":"15 3 * * *"}': incremental
               hourly, a full rebuild daily at 03:15); never two runs at once

options:
  --data-dir DIR   data directory (default: $DATA_DIR or ./data)
  --as-of ISO      the instant the snapshot describes (default: now); an instant before the
                   served generation's as-of is refused (the run would publish an older view
                   of the data and a running server would switch to it)
  --allow-rewind   publish that older view on purpose
  --full           rebuild every segment from scratch and refit the embedder; without it a run
                   is incremental once a generation is published (it computes the new posts only
                   and reuses the rest: docs/operations.md, "Incremental runs")
  --init           run on a data directory that holds nothing yet (no generation, nothing landed),
                   publishing an empty generation; without it such a directory is refused (exit 2):
                   it is most often a mistyped --data-dir
  -h, --help       this text

Logs are JSON lines on stdout; progress goes to stderr. Exit code 0 on success, 1 on failure
(one line on stderr says why), 2 for bad arguments or a refused rewind, 143 when stopped by SIGTERM.`;

function fail(msg: string, code = 1): never {
  process.stderr.write(`pipeline: ${msg}\n`);
  process.exit(code);
}

async function main(): Promise<void> {
  let args;
  try {
    args = parseCliArgs({
      allowPositionals: true,
      options: {
        'data-dir': { type: 'string' },
        'as-of': { type: 'string' },
        'allow-rewind': { type: 'boolean' },
        full: { type: 'boolean' },
        init: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (err) {
    fail(`${(err as Error).message}\n${HELP}`, 2);
  }
  const { values, positionals } = args;
  if (values.help || positionals.length === 0) {
    process.stdout.write(HELP + '\n');
    process.exit(values.help ? 0 : 2);
  }
  let asOf: Date | undefined;
  if (values['as-of'] !== undefined) {
    try {
      asOf = isoInstantOption('as-of', values['as-of']);
    } catch (err) {
      fail((err as Error).message, 2);
    }
  }
  let config;
  try {
    config = loadConfig(values['data-dir'] ? { ...process.env, DATA_DIR: values['data-dir'] } : process.env);
  } catch (err) {
    fail((err as ConfigError).message, 2);
  }
  const log = createLogger('pipeline', config.LOG_LEVEL);
  const refuseEmpty = () => {
    const empty = values.init ? null : emptyDataDirProblem(dataDirLayout(config.DATA_DIR));
    if (empty) fail(empty, 2);
  };

  if (positionals[0] === 'schedule') {
    let schedule;
    try {
      validateSchedule(config.PIPELINE_SCHEDULE);
    } catch (err) {
      fail((err as Error).message, 2);
    }
    refuseEmpty();
    try {
      schedule = startSchedule(config, log);
    } catch (err) {
      fail((err as Error).message, 2);
    }
    const stop = async () => {
      log.info('SIGTERM: stopping the schedule');
      await schedule.stop();
      process.exit(143);
    };
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
    return;
  }

  let stages;
  try {
    stages = resolveStages(positionals);
  } catch (err) {
    fail((err as Error).message, 2);
  }
  refuseEmpty();
  const abort = new AbortController();
  const onSignal = () => {
    if (abort.signal.aborted) process.exit(143); // second signal: stop now
    log.warn('signal received: abandoning the current stage');
    abort.abort();
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  try {
    await runStages(stages, {
      config,
      log,
      asOf,
      signal: abort.signal,
      allowRewind: values['allow-rewind'] ?? false,
      full: values.full ?? false,
    });
  } catch (err) {
    if (err instanceof RewindRefused) fail(err.message, 2);
    if (abort.signal.aborted) fail((err as Error).message, 143);
    fail((err as Error).message.split('\n')[0]!);
  }
}

await main();
