import { getAccount, getBalance, getUsage } from './account.ts';
import { adminCreateAccount, adminCreateApiKey, adminCreditAccount, adminGetAccount } from './admin/accounts.ts';
import { adminCreateBlocklistEntry, adminDeleteBlocklistEntry } from './admin/blocklist.ts';
import { adminListInboundMessages, adminSimulateInboundMessage } from './admin/inbound-messages.ts';
import { adminAssignRoute, adminCreateRoute, adminGetRoute, adminListRoutes, adminUnassignRoute, adminUpdateRoute } from './admin/routes.ts';
import { adminListOptOuts } from './admin/opt-outs.ts';
import { adminApproveSender, adminRejectSender, adminSuspendSender } from './admin/senders.ts';
import { adminEnableWebhookEndpoint, adminListWebhookAttempts } from './admin/webhooks.ts';
import { createApiKey, listApiKeys, revokeApiKey } from './api-keys.ts';
import { listEvents } from './events.ts';
import { getInboundMessage, listInboundMessages } from './inbound-messages.ts';
import { getMessage, listMessages, sendBulkMessages, sendMessage } from './messages.ts';
import { createOptOuts, deleteOptOut, getKeywordSettings, listOptOuts, updateKeywordSettings } from './opt-outs.ts';
import { createSender, getSender, listSenders } from './senders.ts';
import { createWebhookEndpoint, deleteWebhookEndpoint, getWebhookEndpoint, listWebhookEndpoints } from './webhooks.ts';
import type { HandlerMap } from './types.ts';

/** Every operation of openapi.yaml, by operationId. tsc fails when one is missing or answers an undeclared status. */
export const handlers = {
  sendMessage,
  sendBulkMessages,
  listMessages,
  getMessage,
  listInboundMessages,
  getInboundMessage,
  getAccount,
  getBalance,
  getUsage,
  listSenders,
  createSender,
  getSender,
  listApiKeys,
  createApiKey,
  revokeApiKey,
  listWebhookEndpoints,
  createWebhookEndpoint,
  getWebhookEndpoint,
  deleteWebhookEndpoint,
  listEvents,
  listOptOuts,
  createOptOuts,
  deleteOptOut,
  getKeywordSettings,
  updateKeywordSettings,
  adminCreateAccount,
  adminGetAccount,
  adminCreditAccount,
  adminCreateApiKey,
  adminCreateRoute,
  adminListRoutes,
  adminGetRoute,
  adminUpdateRoute,
  adminAssignRoute,
  adminUnassignRoute,
  adminApproveSender,
  adminRejectSender,
  adminSuspendSender,
  adminCreateBlocklistEntry,
  adminDeleteBlocklistEntry,
  adminEnableWebhookEndpoint,
  adminListWebhookAttempts,
  adminListOptOuts,
  adminSimulateInboundMessage,
  adminListInboundMessages,
} satisfies HandlerMap;
