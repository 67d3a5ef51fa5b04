import { McpServer, type CallToolResult } from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { HttpServerConfig } from '../../src/worker/mcp/config.js';
import { serveMcpOverHttp } from '../../src/testing/mcp-http.js';

/**
 * A small CRM, calendar and task service over MCP, for the agent chains the well-known agent designs use:
 * look a user up then their company; fetch a record then update a field; overdue tasks and tomorrow's calendar.
 * It counts every call so tests can prove which tools ran, and how often.
 */

export interface Crm {
  url: string;
  calls: Record<string, number>;
  records: Map<string, Record<string, string>>;
  /** Lets a `hang` call finish (tests that interrupt it never call this). */
  cancellations: number;
  config(name?: string, extra?: Partial<HttpServerConfig>): HttpServerConfig;
  close(): Promise<void>;
}

const users = [
  { id: 'u-1', name: 'Ada Lovelace', companyId: 'c-9' },
  { id: 'u-2', name: 'Alan Turing', companyId: 'c-7' },
];
const companies: Record<string, { id: string; name: string; city: string }> = {
  'c-9': { id: 'c-9', name: 'Analytical Engines Ltd', city: 'London' },
  'c-7': { id: 'c-7', name: 'Bletchley Computing', city: 'Milton Keynes' },
};

const json = (value: unknown): CallToolResult => ({ content: [{ type: 'text', text: JSON.stringify(value) }] });
const readOnly = { readOnlyHint: true };

export async function startCrm(): Promise<Crm> {
  const calls: Record<string, number> = {};
  const records = new Map<string, Record<string, string>>([['u-1', { plan: 'basic', email: 'ada@example.com' }]]);
  const count = (tool: string) => (calls[tool] = (calls[tool] ?? 0) + 1);
  const crm = { cancellations: 0 };

  const served = await serveMcpOverHttp(() => {
    const server = new McpServer({ name: 'crm', version: '1.0.0' });
    server.registerTool(
      'find_user',
      { description: 'Find a user by name.', inputSchema: z.object({ name: z.string() }), annotations: readOnly },
      ({ name }) => {
        count('find_user');
        const user = users.find((candidate) => candidate.name.toLowerCase().includes(name.toLowerCase()));
        return user ? json(user) : { content: [{ type: 'text', text: `No user matches "${name}".` }], isError: true };
      },
    );
    server.registerTool(
      'get_company',
      { description: 'Get a company by id.', inputSchema: z.object({ companyId: z.string() }), annotations: readOnly },
      ({ companyId }) => {
        count('get_company');
        return json(companies[companyId] ?? null);
      },
    );
    server.registerTool(
      'get_record',
      {
        description: "Get a user's account record.",
        inputSchema: z.object({ userId: z.string() }),
        annotations: readOnly,
      },
      ({ userId }) => {
        count('get_record');
        return json(records.get(userId) ?? {});
      },
    );
    server.registerTool(
      'update_field',
      {
        description: "Set one field of a user's account record.",
        inputSchema: z.object({ userId: z.string(), field: z.string(), value: z.string() }),
        annotations: { destructiveHint: true },
      },
      ({ userId, field, value }) => {
        count('update_field');
        records.set(userId, { ...(records.get(userId) ?? {}), [field]: value });
        return json({ ok: true, userId, field, value });
      },
    );
    server.registerTool(
      'overdue_tasks',
      { description: 'List overdue tasks.', inputSchema: z.object({}), annotations: readOnly },
      () => {
        count('overdue_tasks');
        return json([{ id: 't-3', title: 'Send the quarterly report', due: '2026-11-20' }]);
      },
    );
    server.registerTool(
      'calendar',
      { description: 'List the events of a day.', inputSchema: z.object({ date: z.string() }), annotations: readOnly },
      ({ date }) => {
        count('calendar');
        return json([{ date, time: '10:00', title: 'Design review' }]);
      },
    );
    server.registerTool(
      'hang',
      { description: 'Never answers until cancelled (not idempotent).', inputSchema: z.object({}) },
      async (_arguments, context) => {
        count('hang');
        await new Promise<void>((resolve) =>
          context.mcpReq.signal.addEventListener('abort', () => {
            crm.cancellations++;
            resolve();
          }),
        );
        return json({ cancelled: true });
      },
    );
    return server;
  });

  return {
    url: served.url,
    calls,
    records,
    get cancellations() {
      return crm.cancellations;
    },
    config: (name = 'crm', extra = {}) => ({
      name,
      transport: 'http',
      url: served.url,
      headers: {},
      allowTools: undefined,
      denyTools: [],
      timeoutMs: 60_000,
      disabled: false,
      ...extra,
    }),
    close: () => served.close(),
  };
}
