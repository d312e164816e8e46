// The pipeline's stages in run order. Later stages (features, index, narratives, patterns) plug
// in here, between ingest and publish.
import { ingestStage } from './ingest/stage.ts';
import { publishStage } from './publish/stage.ts';
import type { Stage } from './stage.ts';

export const STAGES: Stage[] = [ingestStage, publishStage];
