import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

// No Node built-ins here: workflow code imports these keys to upsert them.

/** Custom search attributes that durable-agent workflows upsert; a server must register them first. */
export const DURABLE_AGENT_SEARCH_ATTRIBUTES = {
  status: defineSearchAttributeKey('DurableAgentStatus', SearchAttributeType.KEYWORD),
  turns: defineSearchAttributeKey('DurableAgentTurns', SearchAttributeType.INT),
  conversationId: defineSearchAttributeKey('DurableAgentConversationId', SearchAttributeType.KEYWORD),
  /** The conversation's tenant (docs/tenants.md); set at start, absent for conversations without one. */
  tenant: defineSearchAttributeKey('DurableAgentTenant', SearchAttributeType.KEYWORD),
} as const;

/** The same keys as a list, the shape `TestWorkflowEnvironment.createLocal({ server: { searchAttributes } })` takes. */
export const DURABLE_AGENT_SEARCH_ATTRIBUTE_KEYS = Object.values(DURABLE_AGENT_SEARCH_ATTRIBUTES);
