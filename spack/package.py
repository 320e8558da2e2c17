# Spack recipe for adaptrace (docs/install.md, "Spack"). Copy this folder's
# package.py into a Spack package repository as packages/adaptrace/package.py
# (`spack repo create`, `spack repo add`), then, from a checkout of adaptrace:
#     spack dev-build adaptrace@main +papi +fortran +html
# Written for Spack 0.22 and 0.23 (language dependencies c, cxx, fortran;
# requires()); Spack 1.0 imports CMakePackage from
# spack_repo.builtin.build_systems.cmake instead. tests/spack checks this
# file against CMakeLists.txt and cmake/options.cmake (its variants name
# real CMake options), since Spack is not installed there.

from spack.package import *


class Adaptrace(CMakePackage):
    """A performance measurement runtime for MPI applications: every MPI
    call traced through PMPI wrappers preloaded into an unmodified binary,
    per-thread timer samples of the call stack (and PAPI counters) kept in a
    fixed memory budget per process by halving the sampling rate instead of
    flushing mid-run, one OTF2 archive at the end, and adaptrace-report for
    a profile and an HTML page of it."""

    # No homepage, licence file, release or download location yet: a
    # checkout is built with `spack dev-build` (or `spack develop` in an
    # environment), which takes the sources from the checkout.
    version("main", branch="main")

    variant("papi", default=True, description="PAPI hardware counters with each sample (ADAPTRACE_METRICS)")
    variant(
        "fortran",
        default=True,
        description="The Fortran MPI wrappers (mpif.h, use mpi, use mpi_f08) and the Fortran tests",
    )
    variant(
        "html",
        default=True,
        description="adaptrace-report --html: its page embeds d3 and d3-flame-graph, "
        "installed with npm (from the npm registry) at build time",
    )

    depends_on("c", type="build")
    # The tests (GoogleTest), and libstdc++ for adaptrace-recover's demangling.
    depends_on("cxx", type="build")
    depends_on("fortran", type="build", when="+fortran")
    depends_on("googletest", type="test")
    depends_on("cmake@3.20:", type="build")
    depends_on("pkgconfig", type="build")
    depends_on("python@3:", type="build")
    depends_on("npm", type="build", when="+html")

    depends_on("mpi")
    depends_on("otf2")
    depends_on("libunwind")
    depends_on("elfutils")  # libdw: the source lines and inlined frames of the samples
    depends_on("papi", when="+papi")

    # The Fortran wrappers call Open MPI's Fortran libraries (libmpi_mpifh,
    # libmpi_usempif08) and its MPI_IN_PLACE common block.
    requires("^openmpi", when="+fortran", msg="adaptrace's Fortran MPI wrappers are written for Open MPI")

    def cmake_args(self):
        # ON or OFF, never AUTO: a variant asked for and not buildable is a
        # configure error rather than a part silently left out.
        return [
            self.define_from_variant("ADAPTRACE_PAPI", "papi"),
            self.define_from_variant("ADAPTRACE_FORTRAN", "fortran"),
            self.define_from_variant("ADAPTRACE_REPORT_HTML", "html"),
            self.define("ADAPTRACE_TESTS", self.run_tests),
            self.define("ADAPTRACE_BENCHMARKS", False),
        ]
