-- packaging/modules/gfsplit.lua - an Lmod module file for gfsplit installed
-- with `./configure --prefix=/opt/gfsplit/0.1.0 && make install` (change
-- root for another prefix); packaging/modules/gfsplit.tcl is the same for
-- Environment Modules.  See README.md, "Installing".
help([[
gfsplit 0.1.0: MPI-parallel split-write, merge, staging, cooperative cache
and storage envelope tools (pcp-split, gfsplit-merge, stat-layout,
gfsplit-mount, cache-warm, stage-in, stage-out, envelope-bench).

Preload libraries for unmodified MPI programs:
  LD_PRELOAD=$GFSPLIT_ROOT/lib/libgfsplit-mpiio.so   (gfsplit-mpiio(7))
  LD_PRELOAD=$GFSPLIT_ROOT/lib/libgfsplit-cache.so   (gfsplit-cache(7))
]])
whatis("Name: gfsplit")
whatis("Version: 0.1.0")
whatis("Description: MPI-parallel tools for split files and node-local storage")

local root = "/opt/gfsplit/0.1.0"

-- the MPI gfsplit was built with (a site's module name may differ)
depends_on("mpich")

setenv("GFSPLIT_ROOT", root)
prepend_path("PATH", pathJoin(root, "bin"))
prepend_path("MANPATH", pathJoin(root, "share/man"))
prepend_path("LD_LIBRARY_PATH", pathJoin(root, "lib"))
prepend_path("PKG_CONFIG_PATH", pathJoin(root, "lib/pkgconfig"))
prepend_path("CPATH", pathJoin(root, "include"))
