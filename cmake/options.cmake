# The optional parts of adaptrace (docs/install.md): each option is AUTO,
# ON or OFF. AUTO (the default) turns the part on when what it needs is
# found and off, with a line saying what is missing, when not: a site
# without npm, PAPI or a Fortran MPI still configures and builds the rest.
# ON is asked for explicitly: a missing dependency is then a configure
# error rather than a part silently left out (Spack's variants pass ON or
# OFF). Each option's outcome is said at configure time and kept in
# ADAPTRACE_WITH_<PART> (TRUE or FALSE), which the CMakeLists test.
#
# Included from the top-level CMakeLists.txt: enable_language must run in
# the top directory's scope, so this is a file included there, not a
# function.

set(adaptrace_tristate_options FORTRAN PAPI REPORT_HTML TESTS)
set(ADAPTRACE_FORTRAN AUTO CACHE STRING
    "Fortran: the Fortran MPI bindings in libadaptrace.so and the Fortran tests (AUTO, ON or OFF)")
set(ADAPTRACE_PAPI AUTO CACHE STRING "PAPI hardware counters with each sample, ADAPTRACE_METRICS (AUTO, ON or OFF)")
set(ADAPTRACE_REPORT_HTML AUTO CACHE STRING
    "adaptrace-report --html: its page embeds d3 and d3-flame-graph installed with npm at build time (AUTO, ON or OFF)")
set(ADAPTRACE_TESTS AUTO CACHE STRING "The test suite: GoogleTest and otf2-print (AUTO, ON or OFF)")
option(ADAPTRACE_BENCHMARKS "The benchmarks (benchmarks/; nothing beyond what the library needs)" ON)
foreach(part ${adaptrace_tristate_options})
  set_property(CACHE ADAPTRACE_${part} PROPERTY STRINGS AUTO ON OFF)
  string(TOUPPER "${ADAPTRACE_${part}}" adaptrace_requested)
  if(NOT adaptrace_requested MATCHES "^(AUTO|ON|OFF|YES|NO|TRUE|FALSE|Y|N|1|0)$")
    message(FATAL_ERROR "ADAPTRACE_${part}=${ADAPTRACE_${part}}: expected AUTO, ON or OFF")
  endif()
endforeach()

# Sets ADAPTRACE_WITH_<part> from ADAPTRACE_<part> and whether its
# dependencies were found (found: the name of a TRUE or FALSE variable),
# and says the outcome: what it uses when on; what is missing (missing)
# and what the build does without the part (without) when AUTO turns it
# off.
macro(adaptrace_resolve_option part found uses missing without)
  string(TOUPPER "${ADAPTRACE_${part}}" adaptrace_requested)
  if(adaptrace_requested STREQUAL "AUTO")
    set(ADAPTRACE_WITH_${part} ${${found}})
    if(${found})
      message(STATUS "ADAPTRACE_${part}: ON (AUTO: ${uses})")
    else()
      message(STATUS "ADAPTRACE_${part}: OFF (AUTO: ${missing}, so ${without}; "
                     "-DADAPTRACE_${part}=ON makes this an error)")
    endif()
  elseif(ADAPTRACE_${part})
    if(NOT ${found})
      message(FATAL_ERROR "ADAPTRACE_${part}=${ADAPTRACE_${part}} was asked for, but ${missing}. "
                          "Install it, or configure with -DADAPTRACE_${part}=OFF (or AUTO) to build without it "
                          "(docs/install.md).")
    endif()
    set(ADAPTRACE_WITH_${part} TRUE)
    message(STATUS "ADAPTRACE_${part}: ON (${uses})")
  else()
    set(ADAPTRACE_WITH_${part} FALSE)
    message(STATUS "ADAPTRACE_${part}: OFF (as asked)")
  endif()
endmacro()

# Fortran: a Fortran compiler, and MPI's Fortran bindings (mpif.h, use mpi,
# use mpi_f08) in Open MPI's libraries, which libadaptrace.so's Fortran
# wrappers call (mpi-events: libmpi_mpifh, libmpi_usempif08 beside it).
# The compiler is only looked for when the option is not OFF.
set(adaptrace_fortran_found FALSE)
set(adaptrace_fortran_missing "no Fortran compiler was found (set FC)")
if(ADAPTRACE_FORTRAN) # AUTO or ON
  include(CheckLanguage)
  check_language(Fortran)
  if(CMAKE_Fortran_COMPILER)
    enable_language(Fortran)
    find_package(MPI COMPONENTS Fortran)
    if(MPI_Fortran_FOUND AND MPI_mpi_mpifh_LIBRARY)
      get_filename_component(adaptrace_mpi_fortran_dir ${MPI_mpi_mpifh_LIBRARY} DIRECTORY)
      find_library(ADT_MPI_USEMPIF08_LIBRARY NAMES mpi_usempif08 HINTS ${adaptrace_mpi_fortran_dir})
    endif()
    if(NOT MPI_Fortran_FOUND)
      set(adaptrace_fortran_missing "MPI's Fortran bindings were not found (an MPI built without Fortran?)")
    elseif(NOT MPI_mpi_mpifh_LIBRARY OR NOT ADT_MPI_USEMPIF08_LIBRARY)
      set(adaptrace_fortran_missing "Open MPI's Fortran libraries libmpi_mpifh and libmpi_usempif08 were not "
                                    "found (the Fortran wrappers are written for Open MPI)")
    else()
      set(adaptrace_fortran_found TRUE)
    endif()
  endif()
endif()
adaptrace_resolve_option(FORTRAN adaptrace_fortran_found "${CMAKE_Fortran_COMPILER}, MPI Fortran bindings"
                         "${adaptrace_fortran_missing}"
                         "libadaptrace.so does not trace the MPI calls of Fortran programs")

# PAPI: the library and its header.
find_library(PAPI_LIBRARY papi)
find_path(PAPI_INCLUDE_DIR papi.h)
set(adaptrace_papi_found FALSE)
if(PAPI_LIBRARY AND PAPI_INCLUDE_DIR)
  set(adaptrace_papi_found TRUE)
endif()
adaptrace_resolve_option(PAPI adaptrace_papi_found "${PAPI_LIBRARY}"
                         "PAPI (papi.h and libpapi; Debian package libpapi-dev) was not found"
                         "ADAPTRACE_METRICS will record no counters")

# The report page: npm installs its libraries (report/package-lock.json)
# into the build directory. An npm found by an earlier configure and
# removed since is looked for again.
if(NPM_EXECUTABLE AND NOT EXISTS "${NPM_EXECUTABLE}")
  unset(NPM_EXECUTABLE CACHE)
endif()
find_program(NPM_EXECUTABLE npm)
set(adaptrace_npm_found FALSE)
if(NPM_EXECUTABLE)
  set(adaptrace_npm_found TRUE)
endif()
adaptrace_resolve_option(REPORT_HTML adaptrace_npm_found "${NPM_EXECUTABLE} installs the page's libraries"
                         "npm was not found"
                         "adaptrace-report is built without --html (its page's libraries, d3 and d3-flame-graph, come from npm at build time)")

# The tests: GoogleTest (C++) and otf2-print (python3 every build needs).
set(adaptrace_tests_found FALSE)
set(adaptrace_tests_missing "no C++ compiler was found (GoogleTest is C++)")
if(ADAPTRACE_TESTS) # AUTO or ON
  include(CheckLanguage)
  check_language(CXX)
  if(CMAKE_CXX_COMPILER)
    enable_language(CXX)
    find_package(GTest)
    find_program(OTF2_PRINT_EXECUTABLE otf2-print)
    if(NOT GTest_FOUND)
      set(adaptrace_tests_missing "GoogleTest was not found (Debian packages libgtest-dev googletest)")
    elseif(NOT OTF2_PRINT_EXECUTABLE)
      set(adaptrace_tests_missing "otf2-print was not found (Debian package otf2-tools)")
    else()
      set(adaptrace_tests_found TRUE)
    endif()
  endif()
endif()
adaptrace_resolve_option(TESTS adaptrace_tests_found "GoogleTest, ${OTF2_PRINT_EXECUTABLE}" "${adaptrace_tests_missing}"
                         "no test is built")

message(STATUS "ADAPTRACE_BENCHMARKS: ${ADAPTRACE_BENCHMARKS}")
