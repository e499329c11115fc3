-- The team's rules kept by PostgreSQL itself (team.md parts 1 and 2), run by `projects team-setup`
-- as the login that owns the store's tables (the dashboard's service login). One reviewed file:
-- every grant, policy, trigger and function a member's own login meets.
--
-- What it guarantees against a member with psql and their own login (docs/team.md):
-- * members (the group role anonlib_members) have SELECT only, on the rows of their projects
--   (row-level security on every table) and never the key, a draft's package or a blob's bytes;
--   no INSERT, UPDATE, DELETE or TRUNCATE on any table, no sequence, no CREATE in the schema;
-- * every change a member makes goes through a SECURITY DEFINER function below that checks the
--   caller (session_user, which SET ROLE does not change) and their role itself; each sets
--   search_path = pg_catalog, public, pg_temp (pg_temp last) and names every object
--   schema-qualified, so a temporary table or function named like one of ours is never read;
-- * ownership is granted only by anonlib_create_project, after the project's row is inserted;
-- * a draft is created in state 'draft' by its drafter, with the package's SHA-256 computed
--   here; every column is immutable once written (trigger, also against the service login)
--   except its state moving draft -> approved | rejected, approved -> withdrawn | released;
-- * approval is a function: an owner or approver other than the drafter approves the digest
--   computed now from the kept package, with a comment when the draft misses its target;
-- * a hand-out records the release only for an approved draft whose kept package still has
--   the approved digest (checked at every read of the package); audit entries are written
--   only here, numbered after the log's last entry and chained after their own project's last
--   (one project's broken chain never stops another's releases), naming session_user, the
--   drafter and the approver as the draft records them; meta's team mode and the chains' heads
--   are written by nobody but these functions and the service login.
--
-- Idempotent: run again over a store set up by an earlier version (the upgrade path), it
-- drops what the earlier version granted and created (policies, the creator trigger).

DO $$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = 'anonlib_members') THEN
    CREATE ROLE anonlib_members NOLOGIN;
  END IF;
END $$;

-- ------------------------------------------------------------------------------ rights
REVOKE CREATE ON SCHEMA public FROM PUBLIC;
GRANT USAGE ON SCHEMA public TO anonlib_members;
REVOKE ALL ON ALL TABLES IN SCHEMA public FROM PUBLIC, anonlib_members;
REVOKE ALL ON ALL SEQUENCES IN SCHEMA public FROM PUBLIC, anonlib_members;
REVOKE ALL ON ALL FUNCTIONS IN SCHEMA public FROM PUBLIC, anonlib_members;
-- earlier versions' objects, replaced below
DROP TRIGGER IF EXISTS projects_creator_owns ON public.projects;
DROP FUNCTION IF EXISTS public.anonlib_creator_owns();
DROP TRIGGER IF EXISTS drafts_rules ON public.drafts;
DROP FUNCTION IF EXISTS public.anonlib_draft_rules();
DROP FUNCTION IF EXISTS public.anonlib_put_blob(text, bigint, bytea);
DROP FUNCTION IF EXISTS public.anonlib_blob_used(text) CASCADE;
DROP FUNCTION IF EXISTS public.anonlib_blob_readable(text) CASCADE;

-- what a member reads (rows limited by the policies below): never projects.key, drafts.package,
-- drafts.source or blobs (those only through the functions that check the role)
GRANT SELECT (id, name, created, updated, version, origin, source_name, records, columns, keep_file,
              file_sha256, source_sha256, state, change, budget_epsilon, budget_delta) ON public.projects TO anonlib_members;
GRANT SELECT (id, project_id, time, drafted_by, made_by, project_version, source_name, source_sha256, target,
              met, released, suppressed, package_sha256, state, decided_by, decided_time, approved_sha256,
              comment, reason, audit_id) ON public.drafts TO anonlib_members;
GRANT SELECT (sha256, size) ON public.blobs TO anonlib_members;
GRANT SELECT ON public.meta, public.releases, public.audit, public.members, public.refusals,
                public.member_changes TO anonlib_members;
-- fingerprints (a private release's sketch of its people, anonlib.projects.budget): no member reads or writes
-- them directly; a spend's fingerprint is added by anonlib_add_fingerprint, read by anonlib_spent_fingerprints

-- ------------------------------------------------------------------------------ helpers
-- the caller's role in a project (the widest of their rows), NULL when not a member
CREATE OR REPLACE FUNCTION public.anonlib_role(pid integer) RETURNS text
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
  SELECT m.role FROM public.members m WHERE m.project_id = pid AND m.login = session_user::text
  ORDER BY pg_catalog.array_position(ARRAY['owner','analyst','approver','viewer']::text[], m.role) LIMIT 1
$$;

-- the caller's role when it is among `allowed`, else an exception in one sentence
CREATE OR REPLACE FUNCTION public.anonlib_require(pid integer, allowed text[], doing text) RETURNS text
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
DECLARE r text; n text;
BEGIN
  SELECT p.name INTO n FROM public.projects p WHERE p.id = pid;
  r := public.anonlib_role(pid);
  IF n IS NULL OR r IS NULL THEN
    RAISE EXCEPTION 'There is no project number % of which % is a member.', pid, session_user USING ERRCODE = '42501';
  END IF;
  IF NOT r = ANY (allowed) THEN
    RAISE EXCEPTION 'Your role in project % is %: only an % may % it.', n, r, pg_catalog.array_to_string(allowed, ' or '), doing
      USING ERRCODE = '42501';
  END IF;
  RETURN r;
END $$;

CREATE OR REPLACE FUNCTION public.anonlib_is_member_login() RETURNS boolean
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
  SELECT pg_catalog.pg_has_role(session_user, 'anonlib_members', 'MEMBER')
     AND NOT (SELECT r.rolsuper FROM pg_catalog.pg_roles r WHERE r.rolname = session_user)
$$;

CREATE OR REPLACE FUNCTION public.anonlib_now() RETURNS text
LANGUAGE sql VOLATILE SET search_path = pg_catalog, pg_temp AS $$
  SELECT pg_catalog.to_char(pg_catalog.clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
$$;

CREATE OR REPLACE FUNCTION public.anonlib_sha256(b bytea) RETURNS text
LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT pg_catalog.encode(pg_catalog.sha256(b), 'hex')
$$;

-- ------------------------------------------------------------------------------ row-level security
ALTER TABLE public.meta ENABLE ROW LEVEL SECURITY;
ALTER TABLE public.blobs ENABLE ROW LEVEL SECURITY;
ALTER TABLE public.projects ENABLE ROW LEVEL SECURITY;
ALTER TABLE public.releases ENABLE ROW LEVEL SECURITY;
ALTER TABLE public.audit ENABLE ROW LEVEL SECURITY;
ALTER TABLE public.members ENABLE ROW LEVEL SECURITY;
ALTER TABLE public.drafts ENABLE ROW LEVEL SECURITY;
ALTER TABLE public.refusals ENABLE ROW LEVEL SECURITY;
ALTER TABLE public.member_changes ENABLE ROW LEVEL SECURITY;
ALTER TABLE public.fingerprints ENABLE ROW LEVEL SECURITY;

DO $$ DECLARE p record; BEGIN  -- every earlier policy of these tables goes; only SELECT policies follow
  FOR p IN SELECT policyname, tablename FROM pg_catalog.pg_policies WHERE schemaname = 'public'
           AND tablename IN ('meta','blobs','projects','releases','audit','members','drafts','refusals','member_changes',
                             'fingerprints')
  LOOP EXECUTE pg_catalog.format('DROP POLICY %I ON public.%I', p.policyname, p.tablename); END LOOP;
END $$;

CREATE POLICY anonlib_meta_read ON public.meta FOR SELECT TO anonlib_members USING (true);
CREATE POLICY anonlib_projects_read ON public.projects FOR SELECT TO anonlib_members
  USING (public.anonlib_role(id) IS NOT NULL);
CREATE POLICY anonlib_releases_read ON public.releases FOR SELECT TO anonlib_members
  USING (public.anonlib_role(project_id) IS NOT NULL);
CREATE POLICY anonlib_audit_read ON public.audit FOR SELECT TO anonlib_members
  USING (public.anonlib_role(project_id) IS NOT NULL);
CREATE POLICY anonlib_members_read ON public.members FOR SELECT TO anonlib_members
  USING (public.anonlib_role(project_id) IS NOT NULL);
CREATE POLICY anonlib_drafts_read ON public.drafts FOR SELECT TO anonlib_members
  USING (public.anonlib_role(project_id) IS NOT NULL);
CREATE POLICY anonlib_member_changes_read ON public.member_changes FOR SELECT TO anonlib_members
  USING (public.anonlib_role(project_id) IS NOT NULL);
-- a member sees their own refused attempts; an owner also those on their project
CREATE POLICY anonlib_refusals_read ON public.refusals FOR SELECT TO anonlib_members
  USING (who = session_user::text OR EXISTS (SELECT 1 FROM public.projects p WHERE p.name = refusals.project
                                              AND public.anonlib_role(p.id) = 'owner'));
-- blobs: a member sees the digest and size of the files of their projects and releases; their bytes
-- only through anonlib_blob, which checks the role and the digest
CREATE OR REPLACE FUNCTION public.anonlib_blob_visible(sha text) RETURNS boolean
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
  SELECT EXISTS (SELECT 1 FROM public.projects p WHERE p.file_sha256 = sha AND public.anonlib_role(p.id) IS NOT NULL)
      OR EXISTS (SELECT 1 FROM public.releases r WHERE sha IN (r.source_blob, r.package_blob, r.table_blob)
                 AND public.anonlib_role(r.project_id) IS NOT NULL)
$$;
CREATE POLICY anonlib_blobs_read ON public.blobs FOR SELECT TO anonlib_members USING (public.anonlib_blob_visible(sha256));

-- ------------------------------------------------------------------------------ triggers
-- a draft never changes but for its decision, in the order draft -> approved | rejected,
-- approved -> withdrawn | released (also for the service login: the app has no other path)
CREATE OR REPLACE FUNCTION public.anonlib_draft_immutable() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, public, pg_temp AS $$
BEGIN
  IF (NEW.id, NEW.project_id, NEW.time, NEW.drafted_by, NEW.made_by, NEW.project_version, NEW.source_name,
      NEW.source_sha256, NEW.target, NEW.met, NEW.released, NEW.suppressed, NEW.package_sha256, NEW.package,
      NEW.source) IS DISTINCT FROM
     (OLD.id, OLD.project_id, OLD.time, OLD.drafted_by, OLD.made_by, OLD.project_version, OLD.source_name,
      OLD.source_sha256, OLD.target, OLD.met, OLD.released, OLD.suppressed, OLD.package_sha256, OLD.package,
      OLD.source) THEN
    RAISE EXCEPTION 'A draft cannot be changed once written; draft the release again.';
  END IF;
  IF OLD.state = 'draft' AND NEW.state IN ('approved', 'rejected') AND OLD.decided_by IS NULL
     AND OLD.comment IS NULL AND OLD.reason IS NULL AND NEW.audit_id IS NULL THEN
    RETURN NEW;
  END IF;
  IF OLD.state = 'approved' AND NEW.state IN ('withdrawn', 'released')
     AND (NEW.decided_by, NEW.decided_time, NEW.approved_sha256, NEW.comment)
         IS NOT DISTINCT FROM (OLD.decided_by, OLD.decided_time, OLD.approved_sha256, OLD.comment)
     AND (NEW.state = 'released' OR NEW.audit_id IS NULL)
     AND (NEW.state = 'withdrawn' OR NEW.reason IS NOT DISTINCT FROM OLD.reason) THEN
    RETURN NEW;
  END IF;
  RAISE EXCEPTION 'A draft moves only from draft to approved or rejected, and from approved to withdrawn or released.';
END $$;
DROP TRIGGER IF EXISTS drafts_immutable ON public.drafts;
CREATE TRIGGER drafts_immutable BEFORE UPDATE ON public.drafts FOR EACH ROW
  EXECUTE FUNCTION public.anonlib_draft_immutable();

CREATE OR REPLACE FUNCTION public.anonlib_append_only() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, public, pg_temp AS $$
BEGIN RAISE EXCEPTION 'The log % is append-only.', TG_TABLE_NAME; END $$;
DROP TRIGGER IF EXISTS member_changes_no_change ON public.member_changes;
CREATE TRIGGER member_changes_no_change BEFORE UPDATE OR DELETE ON public.member_changes FOR EACH ROW
  EXECUTE FUNCTION public.anonlib_append_only();

-- ------------------------------------------------------------------------------ reading
CREATE OR REPLACE FUNCTION public.anonlib_project_key(pid integer) RETURNS bytea
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
  SELECT p.key FROM public.projects p WHERE p.id = pid AND public.anonlib_role(pid) IN ('owner', 'analyst')
$$;

-- a blob's bytes for a member whose role reads the project file or release keeping it; refused when
-- the bytes no longer have the digest they are kept under
CREATE OR REPLACE FUNCTION public.anonlib_blob(sha text) RETURNS bytea
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
DECLARE b bytea;
BEGIN
  IF NOT (EXISTS (SELECT 1 FROM public.projects p WHERE p.file_sha256 = sha
                  AND public.anonlib_role(p.id) IN ('owner', 'analyst', 'approver'))
       OR EXISTS (SELECT 1 FROM public.releases r WHERE sha IN (r.source_blob, r.package_blob, r.table_blob)
                  AND public.anonlib_role(r.project_id) IN ('owner', 'analyst', 'approver'))) THEN
    RETURN NULL;
  END IF;
  SELECT x.data INTO b FROM public.blobs x WHERE x.sha256 = sha;
  IF b IS NOT NULL AND public.anonlib_sha256(b) <> sha THEN
    RAISE EXCEPTION 'The kept file % no longer has the SHA-256 it was kept under; it is not read.', pg_catalog.left(sha, 16);
  END IF;
  RETURN b;
END $$;

-- an approved (or released) draft's package or source file, for the roles that hand it out, only
-- while the package has the approved digest
CREATE OR REPLACE FUNCTION public.anonlib_draft_bytes(did integer, part text) RETURNS bytea
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
DECLARE d public.drafts%ROWTYPE;
BEGIN
  SELECT * INTO d FROM public.drafts x WHERE x.id = did;
  IF d.id IS NULL OR public.anonlib_role(d.project_id) IS NULL THEN
    RAISE EXCEPTION 'There is no release draft % of which % is a member.', did, session_user USING ERRCODE = '42501';
  END IF;
  PERFORM public.anonlib_require(d.project_id, ARRAY['owner', 'analyst', 'approver'], 'hand out releases of');
  IF d.state NOT IN ('approved', 'released') THEN
    RAISE EXCEPTION 'Release % is a draft that cannot be handed out: no second person has approved it.', did
      USING ERRCODE = '42501';
  END IF;
  IF public.anonlib_sha256(d.package) IS DISTINCT FROM d.approved_sha256 THEN
    RAISE EXCEPTION 'Release % no longer has the SHA-256 that was drafted and approved; nothing was handed out.', did;
  END IF;
  RETURN CASE part WHEN 'package' THEN d.package WHEN 'source' THEN d.source END;
END $$;

-- every entry's number, project number and links (digests only): a member checks every chain, and folds the
-- log's head, without its rows (the project number added: dropped first, its result type changed)
DROP FUNCTION IF EXISTS public.anonlib_audit_links();
CREATE FUNCTION public.anonlib_audit_links() RETURNS TABLE (id integer, project_id integer, previous text,
  entry_sha256 text)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
  SELECT a.id, a.project_id, a.previous, a.entry_sha256 FROM public.audit a
$$;

-- where the next entry of project `pid` goes (the chain's lock held by the caller): its number, after the
-- log's last entry, and the digest it follows, its project's last entry's (anonlib.projects.audit.checked_tail).
-- Refused while that project's chain disagrees with its head; another project's chain does not stop it. The
-- entries before `audit_chain_from` (a store written before the chains were per project) hang on one chain.
-- Called only by the functions below (as the tables' owner): no member may call it.
CREATE OR REPLACE FUNCTION public.anonlib_chain_tail(pid integer, OUT number integer, OUT tail text, OUT n integer)
LANGUAGE plpgsql VOLATILE SECURITY INVOKER SET search_path = pg_catalog, public, pg_temp AS $$
DECLARE head text; since integer;
BEGIN
  -- after the log's last entry and every number a chain's head gave (none is given twice)
  number := 1 + GREATEST((SELECT coalesce(pg_catalog.max(a.id), 0) FROM public.audit a),
    (SELECT coalesce(pg_catalog.max(m.value::integer), 0) FROM public.meta m WHERE m.key LIKE 'audit\_head\_entry%'));
  SELECT a.entry_sha256 INTO tail FROM public.audit a WHERE a.project_id = pid ORDER BY a.id DESC LIMIT 1;
  SELECT pg_catalog.count(*) INTO n FROM public.audit a WHERE a.project_id = pid;
  SELECT m.value::integer INTO since FROM public.meta m WHERE m.key = 'audit_chain_from';
  SELECT m.value INTO head FROM public.meta m WHERE m.key = 'audit_head:' || pid::text;
  tail := coalesce(tail, pg_catalog.repeat('0', 64));
  IF (head IS NOT NULL OR EXISTS (SELECT 1 FROM public.audit a WHERE a.project_id = pid
                                  AND a.id >= coalesce(since, number)))
     AND coalesce(head, pg_catalog.repeat('0', 64)) IS DISTINCT FROM tail THEN
    RAISE EXCEPTION 'The audit log''s chain of this project is broken: its head does not match its last entry; no release is recorded.';
  END IF;
  IF since IS NULL THEN  -- this entry is the first chained within its project
    INSERT INTO public.meta (key, value) VALUES ('audit_chain_from', number::text);
  END IF;
END $$;
REVOKE ALL ON FUNCTION public.anonlib_chain_tail(integer) FROM PUBLIC;

-- a file's privacy budget across every project over it, also those the member is not in (sums and numbers
-- only), for a SHA-256 the caller knows: its spends (its own releases and those charged against it) and its
-- total, the smallest set since the last raise (anonlib.projects.budget)
-- file spending: begin
CREATE OR REPLACE FUNCTION public.anonlib_file_spending(sha text) RETURNS TABLE (releases bigint,
  epsilon double precision, delta double precision, total_epsilon double precision, total_delta double precision)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
  SELECT s.n, s.e, s.d, t.total_epsilon, t.total_delta
  FROM (SELECT pg_catalog.count(a.epsilon) AS n, coalesce(pg_catalog.sum(a.epsilon), 0) AS e,
               coalesce(pg_catalog.sum(a.delta), 0) AS d
        FROM public.audit a WHERE a.epsilon IS NOT NULL
        AND (a.source_sha256 = sha OR pg_catalog.strpos(a.charged, '"' || sha || '"') > 0)) s
  LEFT JOIN (SELECT pg_catalog.min(a.total_epsilon) AS total_epsilon, pg_catalog.min(a.total_delta) AS total_delta
             FROM public.audit a WHERE a.source_sha256 = sha AND a.total_epsilon IS NOT NULL
             AND a.id >= (SELECT coalesce(pg_catalog.max(b.id), 0) FROM public.audit b WHERE b.source_sha256 = sha
                          AND b.total_epsilon IS NOT NULL AND b.total_raised)) t ON true
$$;
-- file spending: end

-- ------------------------------------------------------------------------------ audit entries
-- An entry is sealed by the SHA-256 of its canonical JSON (anonlib.projects.records.dumps: keys sorted,
-- no spaces, UTF-8 kept), and the app re-computes that digest from the row. The functions writing
-- entries accept only text that is already canonical, with every field of its type, so the row they
-- write seals to the digest they computed and no member's entry can break the chain for others.
CREATE OR REPLACE FUNCTION public.anonlib_canonical(v jsonb, floats boolean DEFAULT false) RETURNS text
LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, public, pg_temp AS $$
  SELECT CASE pg_catalog.jsonb_typeof(v)
    WHEN 'object' THEN '{' || coalesce((SELECT pg_catalog.string_agg(pg_catalog.to_json(k)::text || ':'
        || public.anonlib_canonical(x, k IN ('epsilon', 'delta', 'total_epsilon', 'total_delta')), ','
        ORDER BY k COLLATE "C") FROM pg_catalog.jsonb_each(v) AS e(k, x)), '') || '}'
    WHEN 'array' THEN '[' || coalesce((SELECT pg_catalog.string_agg(public.anonlib_canonical(x), ',' ORDER BY n)
        FROM pg_catalog.jsonb_array_elements(v) WITH ORDINALITY AS a(x, n)), '') || ']'
    WHEN 'string' THEN pg_catalog.to_json(v #>> '{}')::text
    WHEN 'number' THEN CASE WHEN NOT floats THEN v::text
        WHEN (v::text)::float8::text ~ '^-?[0-9]+$' THEN (v::text)::float8::text || '.0'
        ELSE (v::text)::float8::text END
    ELSE v::text END
$$;

-- the entry's fields and their types (text, integer, boolean, float, object of texts, list of texts)
CREATE OR REPLACE FUNCTION public.anonlib_entry_problem(content text, e jsonb) RETURNS text
LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, public, pg_temp AS $$
DECLARE k text; t text; want text;
BEGIN
  IF pg_catalog.jsonb_typeof(e) IS DISTINCT FROM 'object' THEN RETURN 'not a JSON object'; END IF;
  FOR k, t IN SELECT x.key, pg_catalog.jsonb_typeof(x.value) FROM pg_catalog.jsonb_each(e) x LOOP
    want := CASE
      WHEN k IN ('time', 'project', 'source_name', 'target', 'released_sha256', 'user', 'made_by', 'previous')
        THEN 'string'
      WHEN k IN ('source_sha256', 'package_sha256', 'drafted_by', 'approved_by') THEN 'string|null'
      WHEN k IN ('project_id', 'records', 'released', 'suppressed') THEN 'integer'
      WHEN k IN ('met', 'total_raised') THEN 'boolean'
      WHEN k IN ('epsilon', 'delta', 'total_epsilon', 'total_delta') THEN 'number|null'
      WHEN k = 'parts' THEN 'object' WHEN k = 'charged' THEN 'array'
      ELSE 'unknown' END;
    IF want = 'unknown' THEN RETURN 'an unknown field ' || k; END IF;
    IF NOT (t = ANY (pg_catalog.string_to_array(want, '|'))
            OR (want = 'integer' AND t = 'number' AND (e->>k) ~ '^-?[0-9]{1,9}$')) THEN
      RETURN 'the field ' || k || ' is not ' || want;
    END IF;
  END LOOP;
  IF NOT e ?& ARRAY['time', 'project_id', 'project', 'source_name', 'source_sha256', 'target', 'met', 'records',
                    'released', 'suppressed', 'released_sha256', 'package_sha256', 'parts', 'user', 'made_by',
                    'previous'] THEN
    RETURN 'a field is missing';
  END IF;
  IF EXISTS (SELECT 1 FROM pg_catalog.jsonb_each(e->'parts') p WHERE pg_catalog.jsonb_typeof(p.value) <> 'string')
     OR (e ? 'charged' AND EXISTS (SELECT 1 FROM pg_catalog.jsonb_array_elements(e->'charged') c
                                   WHERE pg_catalog.jsonb_typeof(c) <> 'string')) THEN
    RETURN 'parts and charged hold texts only';
  END IF;
  IF content IS DISTINCT FROM public.anonlib_canonical(e) THEN RETURN 'not in canonical form'; END IF;
  RETURN NULL;
END $$;

-- ------------------------------------------------------------------------------ writing
-- bytes kept under the SHA-256 computed here (the same bytes of a project the caller cannot see are the same blob)
CREATE OR REPLACE FUNCTION public.anonlib_put_blob(bytes bytea) RETURNS text
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
DECLARE sha text := public.anonlib_sha256(bytes);
BEGIN
  IF NOT public.anonlib_is_member_login() THEN
    RAISE EXCEPTION 'Only a member login of the team keeps files through this function.' USING ERRCODE = '42501';
  END IF;
  INSERT INTO public.blobs (sha256, size, data) VALUES (sha, pg_catalog.length(bytes), bytes)
    ON CONFLICT (sha256) DO NOTHING;
  RETURN sha;
END $$;

-- a new project; its creator (session_user) its owner, in the same statement
CREATE OR REPLACE FUNCTION public.anonlib_create_project(pname text, porigin text, psource_name text, precords integer,
  pcolumns integer, pkeep_file boolean, pfile_sha256 text, psource_sha256 text, pstate text, pchange text, pkey bytea)
RETURNS integer
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
DECLARE number integer; stamp text := public.anonlib_now();
BEGIN
  IF NOT public.anonlib_is_member_login() THEN
    RAISE EXCEPTION 'Only a member login of the team creates projects through this function.' USING ERRCODE = '42501';
  END IF;
  IF pkey IS NULL OR pg_catalog.length(pkey) <> 32 THEN
    RAISE EXCEPTION 'A project key is 32 bytes.';
  END IF;
  PERFORM pg_catalog.pg_advisory_xact_lock(7306543);
  number := 1 + GREATEST(
    (SELECT coalesce(pg_catalog.max(p.id), 0) FROM public.projects p),
    (SELECT coalesce(pg_catalog.max(a.project_id), 0) FROM public.audit a),
    (SELECT coalesce(pg_catalog.max(m.value::integer), 0) FROM public.meta m WHERE m.key = 'project_numbers'));
  INSERT INTO public.projects (id, name, created, updated, version, origin, source_name, records, columns,
    keep_file, file_sha256, source_sha256, state, change, key)
  VALUES (number, pname, stamp, stamp, 1, porigin, psource_name, precords, pcolumns, pkeep_file, pfile_sha256,
    psource_sha256, pstate, pg_catalog.left(pchange, 500), pkey);  -- a name taken fails here: nobody is made owner
  INSERT INTO public.meta (key, value) VALUES ('project_numbers', number::text)
    ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value;
  PERFORM pg_catalog.setval(pg_catalog.pg_get_serial_sequence('public.projects', 'id'), number);
  INSERT INTO public.members (project_id, login, role, added, added_by)
    VALUES (number, session_user::text, 'owner', stamp, session_user::text);
  INSERT INTO public.member_changes (time, project_id, who, login, role_before, role_after)
    VALUES (stamp, number, session_user::text, session_user::text, NULL, 'owner');
  RETURN number;
END $$;

-- the working copy saved over version `expected` (compare-and-set); the new version, NULL when stale
CREATE OR REPLACE FUNCTION public.anonlib_save_project(pid integer, expected integer, pstate text, pchange text,
  precords integer, pcolumns integer) RETURNS integer
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
DECLARE v integer;
BEGIN
  PERFORM public.anonlib_require(pid, ARRAY['owner', 'analyst'], 'change');
  UPDATE public.projects p SET version = p.version + 1, updated = public.anonlib_now(), state = pstate,
    change = pg_catalog.left(pchange, 500), records = precords, columns = pcolumns
  WHERE p.id = pid AND p.version = expected RETURNING p.version INTO v;
  RETURN v;
END $$;

CREATE OR REPLACE FUNCTION public.anonlib_rename_project(pid integer, pname text) RETURNS integer
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
DECLARE v integer;
BEGIN
  PERFORM public.anonlib_require(pid, ARRAY['owner', 'analyst'], 'change');
  UPDATE public.projects p SET name = pname, version = p.version + 1, updated = public.anonlib_now(),
    change = pg_catalog.left('renamed to ' || pname, 500) WHERE p.id = pid RETURNING p.version INTO v;
  RETURN v;
END $$;

-- keep the project's file (bytes the caller gives, of the SHA-256 the project read) or erase it
CREATE OR REPLACE FUNCTION public.anonlib_keep_file(pid integer, keep boolean, bytes bytea) RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
DECLARE sha text; was text;
BEGIN
  PERFORM public.anonlib_require(pid, ARRAY['owner', 'analyst'], 'change');
  SELECT p.file_sha256 INTO was FROM public.projects p WHERE p.id = pid;
  IF keep AND bytes IS NOT NULL THEN
    IF NOT EXISTS (SELECT 1 FROM public.projects p WHERE p.id = pid
                   AND p.source_sha256 IS NOT DISTINCT FROM public.anonlib_sha256(bytes)) THEN
      RAISE EXCEPTION 'This file is not the one the project read.';
    END IF;
    sha := public.anonlib_put_blob(bytes);
  ELSIF keep THEN
    sha := was;
  END IF;
  UPDATE public.projects p SET keep_file = keep, file_sha256 = sha WHERE p.id = pid;
  PERFORM public.anonlib_drop_unused_blob(was);
END $$;

CREATE OR REPLACE FUNCTION public.anonlib_drop_unused_blob(sha text) RETURNS void
LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
  DELETE FROM public.blobs b WHERE b.sha256 = sha
    AND NOT EXISTS (SELECT 1 FROM public.projects p WHERE p.file_sha256 = sha)
    AND NOT EXISTS (SELECT 1 FROM public.releases r WHERE sha IN (r.source_blob, r.package_blob, r.table_blob))
$$;
REVOKE ALL ON FUNCTION public.anonlib_drop_unused_blob(text) FROM PUBLIC;

-- erase a project (its owner's call): rows, releases, members, drafts, files only it kept; audit entries stay
CREATE OR REPLACE FUNCTION public.anonlib_delete_project(pid integer) RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
DECLARE shas text[];
BEGIN
  PERFORM public.anonlib_require(pid, ARRAY['owner'], 'delete');
  SELECT pg_catalog.array_agg(x) INTO shas FROM (
    SELECT p.file_sha256 AS x FROM public.projects p WHERE p.id = pid
    UNION SELECT r.source_blob FROM public.releases r WHERE r.project_id = pid
    UNION SELECT r.package_blob FROM public.releases r WHERE r.project_id = pid
    UNION SELECT r.table_blob FROM public.releases r WHERE r.project_id = pid) s WHERE x IS NOT NULL;
  DELETE FROM public.releases r WHERE r.project_id = pid;
  DELETE FROM public.drafts d WHERE d.project_id = pid;
  DELETE FROM public.members m WHERE m.project_id = pid;
  DELETE FROM public.projects p WHERE p.id = pid;
  PERFORM public.anonlib_drop_unused_blob(s) FROM pg_catalog.unnest(coalesce(shas, '{}'::text[])) s;
END $$;

-- a member added (or their role changed) or removed by the owner; never the last owner; on record
CREATE OR REPLACE FUNCTION public.anonlib_set_member(pid integer, plogin text, prole text) RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
DECLARE before text; stamp text := public.anonlib_now();
BEGIN
  PERFORM public.anonlib_require(pid, ARRAY['owner'], 'change the members of');
  IF prole IS NOT NULL AND prole NOT IN ('owner', 'analyst', 'approver', 'viewer') THEN
    RAISE EXCEPTION '''%'' is not a role; a member is one of owner, analyst, approver, viewer.', prole;
  END IF;
  IF plogin IS NULL OR pg_catalog.btrim(plogin) = '' THEN RAISE EXCEPTION 'Name the member.'; END IF;
  PERFORM 1 FROM public.projects p WHERE p.id = pid FOR UPDATE;  -- two owners' changes take turns
  SELECT m.role INTO before FROM public.members m WHERE m.project_id = pid AND m.login = plogin;
  IF prole IS NULL AND before IS NULL THEN
    RAISE EXCEPTION '% is not a member of this project.', plogin;
  END IF;
  IF before = 'owner' AND prole IS DISTINCT FROM 'owner' AND NOT EXISTS (
       SELECT 1 FROM public.members m WHERE m.project_id = pid AND m.role = 'owner' AND m.login <> plogin) THEN
    RAISE EXCEPTION 'The project would have no owner left; give another member the owner role first.';
  END IF;
  IF prole IS NULL THEN
    DELETE FROM public.members m WHERE m.project_id = pid AND m.login = plogin;
  ELSIF before IS NULL THEN
    INSERT INTO public.members (project_id, login, role, added, added_by)
      VALUES (pid, plogin, prole, stamp, session_user::text);
  ELSE
    UPDATE public.members m SET role = prole WHERE m.project_id = pid AND m.login = plogin;
  END IF;
  IF before IS DISTINCT FROM prole THEN
    INSERT INTO public.member_changes (time, project_id, who, login, role_before, role_after)
      VALUES (stamp, pid, session_user::text, plogin, before, prole);
  END IF;
END $$;

-- a refused attempt on record, in the caller's own name
CREATE OR REPLACE FUNCTION public.anonlib_log_refusal(paction text, pproject text, psentence text) RETURNS void
LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
  INSERT INTO public.refusals (time, who, action, project, sentence)
  SELECT public.anonlib_now(), session_user::text, pg_catalog.left(paction, 100), pg_catalog.left(pproject, 200),
         pg_catalog.left(psentence, 2000)
  WHERE public.anonlib_is_member_login()
$$;

-- a release draft: the package and its SHA-256 (computed here), drafted by the caller, in state draft
CREATE OR REPLACE FUNCTION public.anonlib_create_draft(pid integer, pmade_by text, pproject_version integer,
  psource_name text, psource_sha256 text, ptarget text, pmet boolean, preleased integer, psuppressed integer,
  ppackage bytea, psource bytea) RETURNS integer
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
DECLARE did integer;
BEGIN
  PERFORM public.anonlib_require(pid, ARRAY['owner', 'analyst'], 'draft a release of');
  IF ppackage IS NULL THEN RAISE EXCEPTION 'A draft keeps its package.'; END IF;
  INSERT INTO public.drafts (project_id, time, drafted_by, made_by, project_version, source_name, source_sha256,
    target, met, released, suppressed, package_sha256, package, source, state)
  VALUES (pid, public.anonlib_now(), session_user::text, pmade_by, pproject_version, psource_name, psource_sha256,
    ptarget, pmet, preleased, psuppressed, public.anonlib_sha256(ppackage), ppackage, psource, 'draft')
  RETURNING id INTO did;
  RETURN did;
END $$;

-- approve (the digest as computed now from the kept package, by an owner or approver other than the
-- drafter; a comment required when the draft misses its target) or reject (a reason required)
CREATE OR REPLACE FUNCTION public.anonlib_decide_draft(did integer, approve boolean, note text) RETURNS text
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
DECLARE d public.drafts%ROWTYPE; sha text;
BEGIN
  SELECT * INTO d FROM public.drafts x WHERE x.id = did FOR UPDATE;
  IF d.id IS NULL OR public.anonlib_role(d.project_id) IS NULL THEN
    RAISE EXCEPTION 'There is no release draft % of which % is a member.', did, session_user USING ERRCODE = '42501';
  END IF;
  PERFORM public.anonlib_require(d.project_id, ARRAY['owner', 'approver'], 'approve or reject releases of');
  IF d.drafted_by = session_user::text THEN
    RAISE EXCEPTION 'You drafted release %; another member with the approver role must decide it (four eyes).', did
      USING ERRCODE = '42501';
  END IF;
  IF d.state <> 'draft' THEN
    RAISE EXCEPTION 'Release % is already %; nothing was changed.', did, d.state;
  END IF;
  sha := public.anonlib_sha256(d.package);
  IF approve THEN
    IF sha <> d.package_sha256 THEN
      RAISE EXCEPTION 'Release % no longer has the SHA-256 that was drafted; draft it again.', did;
    END IF;
    IF NOT d.met AND coalesce(pg_catalog.btrim(note), '') = '' THEN
      RAISE EXCEPTION 'Release % does not meet its target (%): approving it needs a comment saying why.', did, d.target;
    END IF;
    UPDATE public.drafts x SET state = 'approved', decided_by = session_user::text, decided_time = public.anonlib_now(),
      approved_sha256 = sha, comment = NULLIF(pg_catalog.btrim(note), '') WHERE x.id = did;
  ELSE
    IF coalesce(pg_catalog.btrim(note), '') = '' THEN RAISE EXCEPTION 'Say why the release is rejected.'; END IF;
    UPDATE public.drafts x SET state = 'rejected', decided_by = session_user::text, decided_time = public.anonlib_now(),
      reason = pg_catalog.btrim(note) WHERE x.id = did;
  END IF;
  RETURN CASE WHEN approve THEN 'approved' ELSE 'rejected' END;
END $$;

-- an approval withdrawn before its hand-out, by the approver who gave it or an owner
CREATE OR REPLACE FUNCTION public.anonlib_withdraw_approval(did integer, note text) RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
DECLARE d public.drafts%ROWTYPE;
BEGIN
  SELECT * INTO d FROM public.drafts x WHERE x.id = did FOR UPDATE;
  IF d.id IS NULL OR public.anonlib_role(d.project_id) IS NULL THEN
    RAISE EXCEPTION 'There is no release draft % of which % is a member.', did, session_user USING ERRCODE = '42501';
  END IF;
  IF d.state <> 'approved' THEN
    RAISE EXCEPTION 'Release % is %: only an approval not yet handed out can be withdrawn.', did, d.state;
  END IF;
  IF d.decided_by <> session_user::text AND public.anonlib_role(d.project_id) <> 'owner' THEN
    RAISE EXCEPTION 'Only the approver of release % or an owner withdraws its approval.', did USING ERRCODE = '42501';
  END IF;
  UPDATE public.drafts x SET state = 'withdrawn', reason = coalesce(NULLIF(pg_catalog.btrim(note), ''),
    'approval withdrawn by ' || session_user::text) WHERE x.id = did;
END $$;

-- the hand-out of an approved draft: its audit entry (`content`: the entry as the app's canonical JSON,
-- sealed here by its SHA-256, numbered and chained after the log's tail), the release kept with the stamped
-- package, the draft marked released; the entry's number. Refused unless the draft is approved, its kept
-- package has the approved digest, and the entry names the caller, the drafter and the approver as recorded.
CREATE OR REPLACE FUNCTION public.anonlib_hand_out(did integer, content text, precipe text, stamped bytea)
RETURNS integer
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
DECLARE d public.drafts%ROWTYPE; e jsonb := content::jsonb; number integer; tail text; n integer;
        p public.projects%ROWTYPE; sealed text := public.anonlib_sha256(pg_catalog.convert_to(content, 'UTF8'));
BEGIN
  SELECT * INTO d FROM public.drafts x WHERE x.id = did FOR UPDATE;
  IF d.id IS NULL OR public.anonlib_role(d.project_id) IS NULL THEN
    RAISE EXCEPTION 'There is no release draft % of which % is a member.', did, session_user USING ERRCODE = '42501';
  END IF;
  PERFORM public.anonlib_require(d.project_id, ARRAY['owner', 'analyst', 'approver'], 'hand out releases of');
  IF d.state <> 'approved' THEN
    RAISE EXCEPTION 'Release % is % and cannot be handed out as a new release.', did, d.state USING ERRCODE = '42501';
  END IF;
  IF public.anonlib_sha256(d.package) IS DISTINCT FROM d.approved_sha256 THEN
    RAISE EXCEPTION 'Release % no longer has the SHA-256 that was drafted and approved; nothing was handed out.', did;
  END IF;
  SELECT * INTO p FROM public.projects x WHERE x.id = d.project_id;
  PERFORM pg_catalog.pg_advisory_xact_lock(7306542);  -- the chain's lock (anonlib.projects.audit)
  SELECT t.number, t.tail, t.n INTO number, tail, n FROM public.anonlib_chain_tail(d.project_id) t;
  IF public.anonlib_entry_problem(content, e) IS NOT NULL
     OR e->>'previous' IS DISTINCT FROM tail
     OR (e->>'project_id')::integer IS DISTINCT FROM d.project_id OR e->>'project' IS DISTINCT FROM p.name
     OR e->>'user' IS DISTINCT FROM session_user::text OR e->>'drafted_by' IS DISTINCT FROM d.drafted_by
     OR e->>'approved_by' IS DISTINCT FROM d.decided_by
     OR e->>'package_sha256' IS DISTINCT FROM public.anonlib_sha256(stamped)
     OR e ? 'epsilon' OR e ? 'total_epsilon' THEN
    RAISE EXCEPTION 'This audit entry does not state the hand-out of release % as recorded; nothing was recorded.', did
      USING ERRCODE = '42501';
  END IF;
  INSERT INTO public.audit (id, time, project_id, project, source_name, source_sha256, target, met, records,
    released, suppressed, released_sha256, package_sha256, parts, username, made_by, previous, entry_sha256,
    drafted_by, approved_by)
  VALUES (number, e->>'time', d.project_id, p.name, e->>'source_name', e->>'source_sha256', e->>'target',
    (e->>'met')::boolean, (e->>'records')::integer, (e->>'released')::integer, (e->>'suppressed')::integer,
    e->>'released_sha256', e->>'package_sha256', (e->'parts')::text, session_user::text, e->>'made_by',
    e->>'previous', sealed, d.drafted_by, d.decided_by);
  PERFORM pg_catalog.setval(pg_catalog.pg_get_serial_sequence('public.audit', 'id'), number);
  INSERT INTO public.meta (key, value) VALUES ('audit_head:' || d.project_id::text, sealed),
    ('audit_head_entries:' || d.project_id::text, (n + 1)::text), ('audit_head_entry:' || d.project_id::text, number::text)
    ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value;
  INSERT INTO public.releases (project_id, time, source_name, source_sha256, source_blob, recipe, released_sha256,
    package_blob, audit_id)
  VALUES (d.project_id, e->>'time', e->>'source_name', e->>'source_sha256',
    CASE WHEN p.keep_file AND d.source IS NOT NULL THEN public.anonlib_put_blob(d.source) END, precipe,
    e->>'released_sha256', public.anonlib_put_blob(stamped), number);
  UPDATE public.drafts x SET state = 'released', audit_id = number WHERE x.id = did;
  RETURN number;
END $$;

-- an entry that releases nothing (a private release's spend of ε and δ before it measures; a file's budget
-- set by a project's owner), sealed and chained here; never a release (those are hand-outs of drafts)
CREATE OR REPLACE FUNCTION public.anonlib_append_entry(content text) RETURNS integer
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
DECLARE e jsonb := content::jsonb; number integer; tail text; n integer; pname text; pid integer; sealed text := public.anonlib_sha256(pg_catalog.convert_to(content, 'UTF8'));
BEGIN
  IF public.anonlib_entry_problem(content, e) IS NOT NULL THEN
    RAISE EXCEPTION 'This audit entry is not one the app writes (%); nothing was recorded.',
      public.anonlib_entry_problem(content, e) USING ERRCODE = '42501';
  END IF;
  pid := (e->>'project_id')::integer;
  IF e ? 'total_epsilon' THEN
    PERFORM public.anonlib_require(pid, ARRAY['owner'], 'set the privacy budget of');
    IF NOT (e->>'total_epsilon')::float8 > 0 OR NOT coalesce((e->>'total_delta')::float8, 0) >= 0 THEN
      RAISE EXCEPTION 'A privacy budget''s total is positive.';
    END IF;
  ELSIF e ? 'epsilon' THEN
    PERFORM public.anonlib_require(pid, ARRAY['owner', 'analyst'], 'draft a release of');
    IF NOT (e->>'epsilon')::float8 > 0 OR NOT coalesce((e->>'delta')::float8, 0) >= 0 THEN
      RAISE EXCEPTION 'A private release spends a positive ε.';
    END IF;
  ELSE
    RAISE EXCEPTION 'In a team''s store a release is recorded only when an approved draft is handed out.'
      USING ERRCODE = '42501';
  END IF;
  SELECT p.name INTO pname FROM public.projects p WHERE p.id = pid;
  PERFORM pg_catalog.pg_advisory_xact_lock(7306542);
  SELECT t.number, t.tail, t.n INTO number, tail, n FROM public.anonlib_chain_tail(pid) t;
  IF e->>'previous' IS DISTINCT FROM tail OR e->>'project' IS DISTINCT FROM pname
     OR e->>'user' IS DISTINCT FROM session_user::text OR e ? 'drafted_by' OR e->>'package_sha256' IS NOT NULL
     OR (e->>'released')::integer <> 0 THEN
    RAISE EXCEPTION 'This audit entry does not state what the caller may record; nothing was recorded.'
      USING ERRCODE = '42501';
  END IF;
  INSERT INTO public.audit (id, time, project_id, project, source_name, source_sha256, target, met, records,
    released, suppressed, released_sha256, package_sha256, parts, username, made_by, previous, entry_sha256,
    epsilon, delta, total_epsilon, total_delta, total_raised, charged)
  VALUES (number, e->>'time', pid, pname, e->>'source_name', e->>'source_sha256', e->>'target',
    (e->>'met')::boolean, (e->>'records')::integer, (e->>'released')::integer, (e->>'suppressed')::integer,
    e->>'released_sha256', NULL, (e->'parts')::text, session_user::text, e->>'made_by', e->>'previous', sealed,
    (e->>'epsilon')::float8, (e->>'delta')::float8, (e->>'total_epsilon')::float8, (e->>'total_delta')::float8,
    (e->>'total_raised')::boolean, (e->'charged')::text);
  PERFORM pg_catalog.setval(pg_catalog.pg_get_serial_sequence('public.audit', 'id'), number);
  INSERT INTO public.meta (key, value) VALUES ('audit_head:' || pid::text, sealed),
    ('audit_head_entries:' || pid::text, (n + 1)::text), ('audit_head_entry:' || pid::text, number::text)
    ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value;
  RETURN number;
END $$;

-- a private release's fingerprint, beside the spend entry the caller just recorded (once)
CREATE OR REPLACE FUNCTION public.anonlib_add_fingerprint(paudit_id integer, psource_sha256 text, psource_name text,
  pcolumns text, pperson text, ppeople bytea, ppeople_count integer, prows bytea, prows_count integer) RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM public.audit a WHERE a.id = paudit_id AND a.epsilon IS NOT NULL
                 AND a.username = session_user::text AND a.source_sha256 = psource_sha256
                 AND public.anonlib_role(a.project_id) IN ('owner', 'analyst')) THEN
    RAISE EXCEPTION 'A fingerprint goes beside a private release''s spend recorded by the same login.'
      USING ERRCODE = '42501';
  END IF;
  INSERT INTO public.fingerprints (audit_id, source_sha256, source_name, columns, person, people, people_count,
    rows, rows_count)
  VALUES (paudit_id, psource_sha256, psource_name, pcolumns, pperson, ppeople, ppeople_count, prows, prows_count);
END $$;

-- the fingerprints a private release is compared with: the latest of every spent file other than `sha`
-- (sketches of hashed values and column names, nothing else), so a member's release over the same people in
-- other bytes is charged against a file spent in a project they are not in
CREATE OR REPLACE FUNCTION public.anonlib_spent_fingerprints(sha text) RETURNS TABLE (audit_id integer,
  source_sha256 text, source_name text, columns text, person text, people bytea, people_count integer,
  rows bytea, rows_count integer)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
  SELECT f.audit_id, f.source_sha256, f.source_name, f.columns, f.person, f.people, f.people_count, f.rows,
         f.rows_count
  FROM public.fingerprints f
  WHERE f.audit_id IN (SELECT pg_catalog.max(g.audit_id) FROM public.fingerprints g WHERE g.source_sha256 <> sha
                       GROUP BY g.source_sha256)
  ORDER BY f.audit_id
$$;

-- ------------------------------------------------------------------------------ what members may call
GRANT EXECUTE ON FUNCTION public.anonlib_role(integer), public.anonlib_require(integer, text[], text),
  public.anonlib_is_member_login(), public.anonlib_now(), public.anonlib_sha256(bytea),
  public.anonlib_project_key(integer), public.anonlib_blob(text), public.anonlib_draft_bytes(integer, text),
  public.anonlib_audit_links(), public.anonlib_file_spending(text), public.anonlib_put_blob(bytea),
  public.anonlib_create_project(text, text, text, integer, integer, boolean, text, text, text, text, bytea),
  public.anonlib_save_project(integer, integer, text, text, integer, integer),
  public.anonlib_rename_project(integer, text), public.anonlib_keep_file(integer, boolean, bytea),
  public.anonlib_delete_project(integer), public.anonlib_set_member(integer, text, text),
  public.anonlib_log_refusal(text, text, text),
  public.anonlib_create_draft(integer, text, integer, text, text, text, boolean, integer, integer, bytea, bytea),
  public.anonlib_decide_draft(integer, boolean, text), public.anonlib_withdraw_approval(integer, text),
  public.anonlib_hand_out(integer, text, text, bytea), public.anonlib_append_entry(text),
  public.anonlib_blob_visible(text),
  public.anonlib_add_fingerprint(integer, text, text, text, text, bytea, integer, bytea, integer),
  public.anonlib_spent_fingerprints(text)
TO anonlib_members;

INSERT INTO public.meta (key, value) VALUES ('team', 'on') ON CONFLICT (key) DO UPDATE SET value = 'on';
