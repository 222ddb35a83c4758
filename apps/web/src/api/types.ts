/**
 * The bodies the app reads, as README "HTTP API" and the product API contract describe them.
 * Only the fields the screens use; the API may send more.
 */
export interface ProjectFile {
  id: string;
  project_id: string;
  folder: string;
  title: string;
  file_type: string;
  version: number;
  chars: number;
  author_saved: boolean;
  /** Set on an AI draft (docs/ai-writes.md rule 2): the file whose text it would replace. */
  draft_of: string | null;
  updated_at: string;
  content?: string;
}

export interface FileVersion {
  version: number;
  source: 'author' | 'ai';
  run_id: string | null;
  chars: number;
  partial: boolean;
  partial_reason: string | null;
  created_at: string;
}

export interface Project {
  id: string;
  title: string;
  project_type: string;
  language: 'zh' | 'en';
  role: 'owner' | 'editor' | 'viewer';
  archived: boolean;
  updated_at: string;
}

export interface Session {
  session_id: string;
  project_id: string;
  title: string | null;
  phase: string;
  last_activity_at: string;
}

export interface HistoryMessage {
  id: string;
  role: 'user' | 'assistant';
  content: string;
  run_id: string | null;
  created_at: string;
}

export interface Quota {
  credits: number;
  daily_token_cap: number | null;
  used_today_tokens: number;
}

export interface Member {
  user_id: string;
  email: string;
  display_name: string;
  role: 'owner' | 'editor' | 'viewer';
}

/** An AI text and its acceptance (README "Runtime kernel", GET /projects/:id/artifacts). */
export interface Artifact {
  id: string;
  run_id: string | null;
  file_id: string | null;
  /** Where the text is: the file itself, or its AI draft next to it. */
  text_file_id: string;
  placement: 'in_file' | 'draft';
  version: number;
  base_version: number | null;
  state: 'drafted' | 'under_review' | 'accepted' | 'rejected' | 'revision_requested' | 'superseded';
  comment: string | null;
  findings: Array<{ role: string; text: string; at: string }>;
  created_at: string;
}
