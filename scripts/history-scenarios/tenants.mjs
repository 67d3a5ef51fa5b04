// A tenant's conversation (issue 45, docs/tenants.md): the run sets its DurableAgentTenant search attribute itself when
// started without it, and each model call's cost goes to the tenant's spend ledger (the recordSpend activity; since the
// local-ledger-write patch, a local activity).
import { answerQueued } from './drive.mjs';

export const tenantScenarios = {
  'tenant-turn': {
    description: "a tenant's one-message conversation: its search attribute, each model call sent to its ledger",
    script: [{ content: 'Noted for acme.' }],
    run: (context) => answerQueued(context, ['Hello from acme.'], { tenant: 'acme' }),
  },
  'tenant-turn-local-ledger': {
    description: "a tenant's one-message conversation whose ledger write is a local activity (local-ledger-write)",
    script: [{ content: 'Noted for acme.' }],
    run: (context) => answerQueued(context, ['Hello from acme.'], { tenant: 'acme' }),
  },
};
