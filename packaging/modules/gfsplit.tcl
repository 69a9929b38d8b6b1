#%Module1.0
## packaging/modules/gfsplit.tcl - an Environment Modules file for gfsplit
## installed with `./configure --prefix=/opt/gfsplit/0.1.0 && make install`
## (change root for another prefix); gfsplit.lua is the same for Lmod.
## Install it as MODULEPATH-dir/gfsplit/0.1.0.  See README.md, "Installing".

proc ModulesHelp { } {
    puts stderr "gfsplit 0.1.0: MPI-parallel split-write, merge, staging, cooperative cache"
    puts stderr "and storage envelope tools.  Preload libraries for unmodified MPI programs:"
    puts stderr "  LD_PRELOAD=\$GFSPLIT_ROOT/lib/libgfsplit-mpiio.so   (gfsplit-mpiio(7))"
    puts stderr "  LD_PRELOAD=\$GFSPLIT_ROOT/lib/libgfsplit-cache.so   (gfsplit-cache(7))"
}
module-whatis "gfsplit 0.1.0: MPI-parallel tools for split files and node-local storage"

set root /opt/gfsplit/0.1.0

# the MPI gfsplit was built with (a site's module name may differ)
prereq mpich

setenv       GFSPLIT_ROOT    $root
prepend-path PATH            $root/bin
prepend-path MANPATH         $root/share/man
prepend-path LD_LIBRARY_PATH $root/lib
prepend-path PKG_CONFIG_PATH $root/lib/pkgconfig
prepend-path CPATH           $root/include
