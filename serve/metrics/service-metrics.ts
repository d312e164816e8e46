// The server's metrics (docs/operations.md, "Metrics"): one prom-client registry per server (not
// the library's global one, so a process can run several servers, as the tests do), Node's
// process metrics, and the service's own, each family in its module. GET {base_url}/metrics
// answers with them in Prometheus' text format, to loopback callers only and, with ADMIN_TOKEN
// set, only with `Authorization: Bearer <ADMIN_TOKEN>`, like the admin endpoint.
import Router from '@koa/router';
import type Koa from 'koa';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { bearerMatches, isLoopback } from '../../ledger/admin/admin-api.ts';
import type { AlertOutbox } from '../alerts/alert-model.ts';
import type { WatchStore } from '../alerts/watch-store.ts';
import { AlertMetrics } from './alert-metrics.ts';
import { watchAlertBacklog } from './backlog-metrics.ts';
import { buildInfo } from './build-info.ts';
import { CreditMetrics } from './credit-metrics.ts';
import { DeliveryMetrics } from './delivery-metrics.ts';
import { httpMetrics } from './http-metrics.ts';
import { JobMetrics } from './job-metrics.ts';
import { watchServing, type ServingSources } from './serving-metrics.ts';
import type { JobRunner } from '../jobs/job-runner.ts';

const METRICS_PATH = '/metrics';

export class ServiceMetrics {
  readonly registry = new Registry();
  readonly credits = new CreditMetrics(this.registry);
  readonly jobs = new JobMetrics(this.registry);
  /** The alerts' delivery worker reports each attempt here (serve/alerts/alert-model.ts, DeliveryObserver). */
  readonly deliveries = new DeliveryMetrics(this.registry);
  /** The alert evaluator reports each evaluation here (serve/alerts/alert-evaluator.ts, onEvaluated). */
  readonly alerts = new AlertMetrics(this.registry);
  /** Requests by route and status: the app's outermost middleware. */
  readonly http: Koa.Middleware;

  constructor(private readonly prefix: string) {
    collectDefaultMetrics({ register: this.registry });
    buildInfo(this.registry);
    this.http = httpMetrics(this.registry, prefix, prefix + METRICS_PATH);
  }

  /** The gauges read at each scrape: the generation, the last run, the answer cache, the search workers, the job queue, the alerts' backlog. */
  watch(sources: ServingSources & { jobs: JobRunner; alerts: { outbox: AlertOutbox; watches: WatchStore } }): void {
    watchServing(this.registry, sources);
    this.jobs.watch(sources.jobs);
    watchAlertBacklog(this.registry, sources.alerts);
  }

  /**
   * GET {prefix}/metrics. A caller off loopback gets the 404 any unknown path gets; with a token
   * set, a missing or wrong one is a 401. Without ADMIN_TOKEN, loopback alone lets a scraper in
   * (the figures hold no keys, secrets, accounts or queries).
   */
  router(token: string | undefined): Router {
    const r = new Router({ prefix: this.prefix });
    r.get(METRICS_PATH, async (ctx) => {
      if (!isLoopback(ctx.socket.remoteAddress ?? '')) {
        ctx.status = 404;
        ctx.body = { error: `no route ${ctx.method} ${ctx.path}` };
        return;
      }
      if (token && !bearerMatches(ctx.get('authorization'), token)) {
        ctx.status = 401;
        ctx.set('WWW-Authenticate', 'Bearer realm="metrics"');
        ctx.body = { error: 'metrics token required (Authorization: Bearer <ADMIN_TOKEN>)' };
        return;
      }
      ctx.type = this.registry.contentType;
      ctx.body = await this.registry.metrics();
    });
    return r;
  }
}
