/*
 * envstub.c - TEMPORARY: the metric and cache names of envelope.h, so that
 * envout.c builds and is tested before envmodel.c exists.  envmodel.c
 * defines these two; drop this file when they meet.  Nothing but the
 * names is here, and nothing else may come to depend on it.
 */
#include "envelope.h"

const char *
gfsp_env_metric_name(int metric)
{
	static const char *const names[GFSP_ENV_NMETRIC] = {
		"create", "write", "read-local", "read-remote", "read-shared"
	};

	return metric >= 0 && metric < GFSP_ENV_NMETRIC ? names[metric] : "?";
}

const char *
gfsp_env_cache_name(int cache)
{
	static const char *const names[] = { "keep", "drop", "direct" };

	return cache >= 0 && cache < 3 ? names[cache] : "?";
}
