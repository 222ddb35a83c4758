export { ensureQuotaAccount } from './quota.ts';
export { recordUsage } from './usage.ts';
