#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "mpi_functions.h"

namespace {

std::string read_file(const std::string &path)
{
    std::ifstream stream(path);
    std::stringstream text;
    text << stream.rdbuf();
    return text.str();
}

/* The function names of the description (first word of each entry line);
 * with_f08: only those that have an mpi_f08 binding. */
std::vector<std::string> described_functions(bool with_f08 = false)
{
    std::ifstream stream(ADT_MPI_API_FILE);
    std::vector<std::string> names;
    std::string line;
    while (std::getline(stream, line)) {
        if (line.rfind("MPI_", 0) != 0)
            continue;
        std::string name_field = line.substr(0, line.find('|'));
        if (with_f08 && name_field.find("[no mpi_f08]") != std::string::npos)
            continue;
        names.push_back(name_field.substr(0, name_field.find_first_of(" [")));
    }
    return names;
}

std::string lower(std::string text)
{
    for (char &c : text)
        c = (char)std::tolower((unsigned char)c);
    return text;
}

std::string upper(std::string text)
{
    for (char &c : text)
        c = (char)std::toupper((unsigned char)c);
    return text;
}

TEST(Generator, DescriptionCoversTheFunctionTable)
{
    std::vector<std::string> names = described_functions();
    ASSERT_EQ(names.size(), (size_t)ADT_MPI_FN_COUNT);
    std::set<std::string> unique(names.begin(), names.end());
    EXPECT_EQ(unique.size(), names.size());
    for (size_t i = 0; i < names.size(); ++i)
        EXPECT_EQ(names[i], adt_mpi_functions[i].name);
}

// Each entry point passes its call on to the next definition of its own
// symbol (a stacked tool, else the MPI library), resolved at start-up,
// with its PMPI twin as the type and the fallback (next.h).
static void expect_passes_on(const std::string &wrappers, const std::string &symbol, const std::string &pmpi)
{
    EXPECT_NE(wrappers.find("ADT_MPI_NEXT_DEFINE(" + symbol + ", " + pmpi + ");"), std::string::npos) << symbol;
    EXPECT_NE(wrappers.find("ADT_MPI_NEXT(" + symbol + ")("), std::string::npos) << symbol;
    EXPECT_NE(wrappers.find("ADT_MPI_NEXT_FIND(" + symbol + ", " + pmpi + ");"), std::string::npos) << symbol;
}

TEST(Generator, EveryFunctionHasACWrapperPassingOnToTheNextDefinition)
{
    std::string wrappers = read_file(ADT_MPI_GENERATED_DIR "/wrappers_c.c");
    ASSERT_FALSE(wrappers.empty());
    for (const std::string &name : described_functions()) {
        EXPECT_NE(wrappers.find("\nint " + name + "("), std::string::npos) << name;
        expect_passes_on(wrappers, name, "P" + name);
    }
}

TEST(Generator, EveryFunctionHasAllFourFortranNamesPassingOnToTheNextDefinition)
{
    std::string wrappers = read_file(ADT_MPI_GENERATED_DIR "/wrappers_fortran.c");
    ASSERT_FALSE(wrappers.empty());
    for (const std::string &name : described_functions()) {
        std::string base = lower(name);
        EXPECT_NE(wrappers.find("\nvoid " + base + "_("), std::string::npos) << name;
        expect_passes_on(wrappers, base + "_", "p" + base + "_");
        for (const std::string &alias : { base, base + "__", upper(name) })
            EXPECT_NE(wrappers.find("void " + alias + "(") , std::string::npos) << alias;
    }
}

TEST(Generator, EveryFunctionHasAnF08EntryPointPassingOnToTheNextDefinition)
{
    std::string wrappers = read_file(ADT_MPI_GENERATED_DIR "/wrappers_f08.c");
    ASSERT_FALSE(wrappers.empty());
    for (const std::string &name : described_functions(true)) {
        std::string symbol = lower(name) + "_f08_";
        EXPECT_NE(wrappers.find("\nvoid " + symbol + "("), std::string::npos) << name;
        expect_passes_on(wrappers, symbol, "p" + symbol);
    }
}

// A string's length comes after all arguments: an int for Open MPI's
// mpif.h functions (C), gfortran's size_t for its mpi_f08 ones (Fortran).
// MPI_PCONTROL has no ierror in either binding.
TEST(Generator, FortranBindingsPassStringLengthsAndIerrorAsOpenMpiTakesThem)
{
    std::string mpif = read_file(ADT_MPI_GENERATED_DIR "/wrappers_fortran.c");
    std::string f08 = read_file(ADT_MPI_GENERATED_DIR "/wrappers_f08.c");
    EXPECT_NE(mpif.find("void pmpi_info_get_(MPI_Fint *info, char *key, MPI_Fint *valuelen, char *value, "
                        "MPI_Fint *flag, MPI_Fint *ierr, int key_length, int value_length);"),
              std::string::npos);
    EXPECT_NE(f08.find("void pmpi_info_get_f08_(MPI_Fint *info, char *key, MPI_Fint *valuelen, char *value, "
                       "MPI_Fint *flag, MPI_Fint *ierror, size_t key_length, size_t value_length);"),
              std::string::npos);
    EXPECT_NE(mpif.find("void pmpi_pcontrol_(MPI_Fint *level);"), std::string::npos);
    EXPECT_NE(f08.find("void pmpi_pcontrol_f08_(MPI_Fint *level);"), std::string::npos);
}

/* Each described function with its MPI_Comm arguments passed by value
 * (the C parameters' field of its line) and how its notes say to pass
 * MPI_COMM_WORLD on in an MPMD launch. */
struct CommArguments {
    std::string name;
    std::vector<std::string> comms;
    bool real_world;
    bool world_attributes;
};

std::vector<CommArguments> comm_arguments()
{
    std::ifstream stream(ADT_MPI_API_FILE);
    std::vector<CommArguments> functions;
    std::string line;
    while (std::getline(stream, line)) {
        if (line.rfind("MPI_", 0) != 0)
            continue;
        std::vector<std::string> fields;
        std::istringstream split(line);
        for (std::string field; std::getline(split, field, '|');)
            fields.push_back(field);
        CommArguments function{ fields[0].substr(0, fields[0].find_first_of(" [")), {},
                                fields[0].find("[real world]") != std::string::npos,
                                fields[0].find("[world attributes]") != std::string::npos };
        // A function without parameters ends its line with the last '|'.
        std::istringstream parameters(fields.size() > 3 ? fields[3] : "");
        for (std::string parameter; std::getline(parameters, parameter, ',');) {
            std::istringstream words(parameter);
            std::string type, name, extra;
            if (words >> type >> name && !(words >> extra) && type == "MPI_Comm" && name[0] != '*' &&
                name.find('[') == std::string::npos)
                function.comms.push_back(name);
        }
        functions.push_back(function);
    }
    return functions;
}

/* The part of a wrapper before it decides whether to record the call: what
 * runs on both of its paths. */
std::string before_location(const std::string &wrappers, const std::string &opening)
{
    size_t start = wrappers.find(opening);
    if (start == std::string::npos)
        return "";
    return wrappers.substr(start, wrappers.find("adt_location *location", start) - start);
}

// The MPMD launch (docs/online.md): every MPI_Comm argument is narrowed to
// the application's world on both paths of every entry point, unless
// mpi.api says otherwise ([real world]: MPI_Abort; [world attributes]: as
// given for the attributes MPI caches on MPI_COMM_WORLD).
TEST(Generator, EveryCommunicatorArgumentIsNarrowedBeforeTheCallIsPassedOn)
{
    std::string c = read_file(ADT_MPI_GENERATED_DIR "/wrappers_c.c");
    std::string mpif = read_file(ADT_MPI_GENERATED_DIR "/wrappers_fortran.c");
    std::string f08 = read_file(ADT_MPI_GENERATED_DIR "/wrappers_f08.c");
    size_t narrowed = 0;
    for (const CommArguments &function : comm_arguments()) {
        std::string c_part = before_location(c, "\nint " + function.name + "(");
        std::string mpif_part = before_location(mpif, "\nvoid " + lower(function.name) + "_(");
        std::string f08_part = before_location(f08, "\nvoid " + lower(function.name) + "_f08_(");
        for (const std::string &comm : function.comms) {
            std::string c_line = comm + " = " +
                                 (function.world_attributes ? "adt_mpi_world_attribute("
                                                            : "adt_mpi_narrowed(" + comm + ")");
            std::string fortran_line = "MPI_Fint " + comm + "_narrowed = " +
                                       (function.world_attributes ? "adt_mpi_world_attribute("
                                                                  : "adt_mpi_narrowed_fortran(*" + comm + ")");
            bool expected = !function.real_world;
            EXPECT_EQ(c_part.find(c_line) != std::string::npos, expected) << function.name << " " << comm;
            EXPECT_EQ(mpif_part.find(fortran_line) != std::string::npos, expected) << function.name << " " << comm;
            if (!f08_part.empty()) {
                EXPECT_EQ(f08_part.find(fortran_line) != std::string::npos, expected) << function.name << " " << comm;
            }
            narrowed += expected;
        }
    }
    // The point-to-point, collective, communicator, topology, window,
    // file and dynamic-process functions: well over a hundred arguments.
    EXPECT_GT(narrowed, 100u);
    // MPI_Intercomm_create: both of its communicators.
    std::string intercomm = before_location(c, "\nint MPI_Intercomm_create(");
    EXPECT_NE(intercomm.find("local_comm = adt_mpi_narrowed(local_comm);"), std::string::npos);
    EXPECT_NE(intercomm.find("peer_comm = adt_mpi_narrowed(peer_comm);"), std::string::npos);
}

TEST(Generator, VersionScriptExportsExactlyTheEntryPoints)
{
    std::string map = read_file(ADT_MPI_GENERATED_DIR "/adaptrace.map");
    std::set<std::string> exported;
    std::istringstream lines(map);
    std::string line;
    while (std::getline(lines, line)) {
        size_t start = line.find_first_not_of(' ');
        if (start == std::string::npos || line.back() != ';' || line.find_first_of(":}") != std::string::npos)
            continue;
        exported.insert(line.substr(start, line.size() - start - 1));
    }
    // The interposers of the other modules: new threads, the shared
    // signals, dlclose, and the sleeping calls a timer signal must not cut
    // short (sampler/sleeping_calls.c); the user API (user/adaptrace.h),
    // whose definitions take the place of libadaptrace_user's no-ops.
    std::set<std::string> expected = { "pthread_create", "sigaction", "signal", "dlclose", "*", "adaptrace_*",
                                       "sleep", "usleep", "nanosleep", "clock_nanosleep", "poll", "ppoll",
                                       "select", "pselect", "epoll_wait", "epoll_pwait", "epoll_pwait2",
                                       "pause", "sigsuspend", "sigtimedwait", "sigwaitinfo" };
    for (const std::string &name : described_functions())
        for (const std::string &symbol : { name, lower(name) + "_", lower(name), lower(name) + "__", upper(name) })
            expected.insert(symbol);
    for (const std::string &name : described_functions(true))
        expected.insert(lower(name) + "_f08_");
    EXPECT_EQ(exported, expected);
    EXPECT_NE(map.find("local:\n    *;"), std::string::npos);
}

} // namespace
