/**
 * The console API's types, derived on the server from its TypeBox schemas
 * (src/api/routes/console/console.types.ts): never written twice.
 */
export type {
  Account,
  ApiKeyItem,
  CollisionException,
  CreatedKey,
  Dashboard,
  DryRunAnswer,
  InvitationInfo,
  KeysAnswer,
  Member,
  MemberAddedAnswer,
  MembersAnswer,
  Network,
  PasswordStrength,
  PendingInvitation,
  PlanLimits,
  ProjectAllowance,
  ProjectDetail,
  ProjectListItem,
  Provider,
  RegisterAnswer,
  Role,
  Security,
  SessionAnswer as AccountAnswer,
  Settings,
  TryAnswer,
  TryBody,
  TryMethod,
  UsageStats,
} from "../../src/api/routes/console/console.types";
