// The query parameters of GET /usage: the one definition the route, the MCP tool and the OpenAPI
// document share (serve/http/query.ts).
import { z } from 'zod';
import { cursorField, intField } from '../http/query.ts';

export const usageQuery = z.object({
  limit: intField('limit', 1, 500).default(50).describe('1..500, default 50'),
  cursor: cursorField.optional(),
  keyId: z.string({ error: 'keyId must be a string' }).min(1, 'keyId must not be empty').optional().describe('only entries of this key'),
});
