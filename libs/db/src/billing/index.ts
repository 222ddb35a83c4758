// The billing's write functions, and only its code imports them (test/arch/import-rules.ts,
// docs/architecture.md "libs/db, split by owner"); what another owner writes too comes from shared-tables/.
export { ensureQuotaAccount, reserveRunCredit } from './quota.ts';
export { recordUsage } from './usage.ts';
