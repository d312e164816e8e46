-- The events still to be delivered, indexed apart (serve/alerts/pg-outbox-store.ts, countWaiting): /metrics
-- counts them at every scrape of every replica, and they are few beside the delivered ones each
-- watch keeps, so the count reads the backlog rather than the whole table.

CREATE INDEX events_waiting ON alert_outbox.events (status) WHERE status IN ('pending', 'paused');
