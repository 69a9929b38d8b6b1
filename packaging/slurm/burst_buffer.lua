--[[
burst_buffer.lua - gfsplit's stage-in and stage-out for Slurm's
burst_buffer/lua plugin (Slurm 22.05).  Install it as burst_buffer.lua
beside slurm.conf, with BurstBufferType=burst_buffer/lua there, and the
node side as Prolog and Epilog (PrologFlags=Alloc); gfsplit-slurm(7)
says how.

A job script asks with directives of its own, at most one of each:

  #BB_LUA gfsplit stage-in  SRC DEST    before the job: SRC (shared
                                         storage) onto every node's DEST
  #BB_LUA gfsplit stage-out SRC DEST    after it: every node's SRC into
                                         DEST/NODE/ on shared storage

SRC and DEST are absolute paths or gfarm:// URLs.  At submission the
directives are checked here (a bad one rejects the job, sbatch says why);
in setup the job's uid and gid are recorded; in pre-run the job's user
must be able to read SRC, or the job is held with the reason squeue
shows; the copies themselves run as the job's user on its nodes
(gfsplit-bb, the helper this calls).
--]]

local helper = "@GFSPLIT_BB@"

local function bad_path(p)
	if p == nil then
		return "a path is missing"
	end
	if not (p:match("^/") or p:match("^gfarm://")) then
		return "'" .. p .. "' is not an absolute path or gfarm:// URL"
	end
	if p:match("[%c%s'\"\\`$;&|<>*?%[%]{}()!#~]") then
		return "'" .. p .. "' has a character gfsplit's directives do not take"
	end
	if ("/" .. p .. "/"):match("/%.%.?/") then
		return "'" .. p .. "' has a . or .. component"
	end
	return nil
end

-- the directives of a job script: {["stage-in"] = {src, dst}, ...}, or
-- nil and why not
local function directives(job_script)
	local f = io.open(job_script, "r")
	if f == nil then
		return nil, "cannot read the job script"
	end
	local found = {}
	for line in f:lines() do
		if line:match("^#BB_LUA%s+gfsplit") then
			local w = {}
			for word in line:gmatch("%S+") do
				w[#w + 1] = word
			end
			local op = w[3]
			if op ~= "stage-in" and op ~= "stage-out" then
				f:close()
				return nil, "'" .. (op or "") .. "': gfsplit directives are stage-in and stage-out"
			end
			if #w ~= 5 then
				f:close()
				return nil, op .. " takes SRC and DEST, nothing else"
			end
			local why = bad_path(w[4]) or bad_path(w[5])
			if why then
				f:close()
				return nil, op .. ": " .. why
			end
			if found[op] then
				f:close()
				return nil, "one " .. op .. " directive a job"
			end
			found[op] = {w[4], w[5]}
		end
	end
	f:close()
	return found
end

-- run the helper: its status, and its last line of output as the message
local function run(args)
	local out = os.tmpname()
	local rc = os.execute(helper .. " " .. args .. " >" .. out .. " 2>&1")
	local msg = ""
	local f = io.open(out, "r")
	if f then
		for line in f:lines() do
			if line ~= "" then
				msg = line
			end
		end
		f:close()
	end
	os.remove(out)
	if rc ~= 0 then
		return slurm.ERROR, msg
	end
	return slurm.SUCCESS, msg
end

function slurm_bb_job_process(job_script)
	local d, why = directives(job_script)
	if d == nil then
		return slurm.ERROR, "gfsplit burst buffer: " .. why
	end
	return slurm.SUCCESS
end

function slurm_bb_pools()
	return slurm.SUCCESS
end

-- slurmctld gives setup the job's uid and gid, those it authenticated at
-- submission; the helper records them for pre-run and post-run, which
-- Slurm 22.05 gives the job id alone (the job's record shows words of the
-- user's beside them: gfsplit-bb says why it reads none of it)
function slurm_bb_setup(job_id, uid, gid, pool, bb_size, job_script)
	local args = {tostring(job_id), tostring(uid), tostring(gid)}
	for _, a in ipairs(args) do
		if not a:match("^%d+$") then
			return slurm.ERROR, "gfsplit burst buffer: setup: '" .. a .. "' is not a number"
		end
	end
	return run("setup " .. table.concat(args, " "))
end

function slurm_bb_data_in(job_id, job_script)
	return slurm.SUCCESS
end

function slurm_bb_real_size(job_id)
	return slurm.SUCCESS
end

function slurm_bb_paths(job_id, job_script, path_file)
	return slurm.SUCCESS
end

-- the nodes are known: the job's user must be able to read SRC; the
-- plan goes to the nodes, whose Prologs copy (gfsplit-bb says why there)
function slurm_bb_pre_run(job_id, job_script)
	local d, why = directives(job_script)
	if d == nil then
		return slurm.ERROR, "gfsplit burst buffer: " .. why
	end
	local i, o = d["stage-in"] or {"-", "-"}, d["stage-out"] or {"-", "-"}
	return run("pre-run " .. job_id .. " '" .. i[1] .. "' '" .. i[2] .. "' '" .. o[1] .. "' '" .. o[2] .. "'")
end

-- the job has ended, its nodes are still its own: stage-out from every
-- node, each node's Epilog starting its part
function slurm_bb_post_run(job_id, job_script)
	return run("post-run " .. job_id)
end

function slurm_bb_data_out(job_id, job_script)
	return slurm.SUCCESS
end

function slurm_bb_job_teardown(job_id, job_script, hurry)
	return run("teardown " .. job_id)
end

function slurm_bb_get_status(...)
	return slurm.SUCCESS, "gfsplit: stage-in and stage-out directives (#BB_LUA gfsplit)\n"
end
