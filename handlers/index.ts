import { getAccount, getBalance, getUsage, listBalanceTransactions, updateAccount } from './account.ts';
import {
  adminCloseAccount,
  adminCreateAccountNote,
  adminCreateAccount,
  adminCreateApiKey,
  adminCreditAccount,
  adminGetAccount,
  adminListAccounts,
  adminReactivateAccount,
  adminSuspendAccount,
} from './admin/accounts.ts';
import { adminListAccountApiKeys, adminListAccountLedger, adminListAccountRoutes } from './admin/account-lists.ts';
import { adminListAuditLog } from './admin/audit-log.ts';
import { adminCreateOperator, adminGetCurrentOperator, adminListOperators, adminRevokeOperator } from './admin/operators.ts';
import { adminCreateBlocklistEntry, adminDeleteBlocklistEntry, adminListBlocklist } from './admin/blocklist.ts';
import { adminListInboundMessages, adminSimulateInboundMessage } from './admin/inbound-messages.ts';
import { adminGetMessageStory, adminListMessages } from './admin/messages.ts';
import { adminAssignRoute, adminCreateRoute, adminGetRoute, adminListRoutes, adminUnassignRoute, adminUpdateRoute } from './admin/routes.ts';
import { adminListOptOuts } from './admin/opt-outs.ts';
import { adminApproveSender, adminListSenders, adminRejectSender, adminSuspendSender } from './admin/senders.ts';
import { adminEnableWebhookEndpoint, adminListWebhookAttempts, adminResendWebhookEvent } from './admin/webhooks.ts';
import { createApiKey, getCurrentApiKey, listApiKeys, revokeApiKey } from './api-keys.ts';
import { listEvents } from './events.ts';
import { getStats } from './stats.ts';
import { adminGetStats } from './admin/stats.ts';
import { getInboundMessage, listInboundMessages } from './inbound-messages.ts';
import { cancelBulk, cancelMessage, getMessage, getMessageStory, listMessages, previewMessages, sendBulkMessages, sendMessage } from './messages.ts';
import { createOptOuts, deleteOptOut, getKeywordSettings, listOptOuts, updateKeywordSettings } from './opt-outs.ts';
import { createSender, getSender, listSenders } from './senders.ts';
import {
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  getWebhookEndpoint,
  listWebhookAttempts,
  listWebhookEndpoints,
  resendWebhookEvent,
  rotateWebhookSecret,
  sendWebhookTestEvent,
  updateWebhookEndpoint,
} from './webhooks.ts';
import type { HandlerMap } from './types.ts';

/** Every operation of openapi.yaml, by operationId. tsc fails when one is missing or answers an undeclared status. */
export const handlers = {
  sendMessage,
  sendBulkMessages,
  cancelMessage,
  cancelBulk,
  previewMessages,
  listMessages,
  getMessage,
  getMessageStory,
  listInboundMessages,
  getInboundMessage,
  getAccount,
  getBalance,
  getUsage,
  updateAccount,
  listBalanceTransactions,
  getStats,
  adminGetStats,
  listSenders,
  createSender,
  getSender,
  listApiKeys,
  getCurrentApiKey,
  createApiKey,
  revokeApiKey,
  listWebhookEndpoints,
  createWebhookEndpoint,
  getWebhookEndpoint,
  deleteWebhookEndpoint,
  updateWebhookEndpoint,
  listWebhookAttempts,
  sendWebhookTestEvent,
  resendWebhookEvent,
  rotateWebhookSecret,
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
  adminListAccounts,
  adminSuspendAccount,
  adminCloseAccount,
  adminReactivateAccount,
  adminListAuditLog,
  adminCreateOperator,
  adminListOperators,
  adminRevokeOperator,
  adminGetCurrentOperator,
  adminCreateAccountNote,
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
  adminResendWebhookEvent,
  adminListOptOuts,
  adminSimulateInboundMessage,
  adminListInboundMessages,
  adminListSenders,
  adminListAccountRoutes,
  adminListAccountApiKeys,
  adminListAccountLedger,
  adminListBlocklist,
  adminListMessages,
  adminGetMessageStory,
} satisfies HandlerMap;
