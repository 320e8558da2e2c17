// Running a program the way a user does, for the tests of tests/runtime:
// in a chosen working directory, with an environment free of adaptrace
// settings plus the ones a test gives, stdout and stderr into files; and
// reading back summary.json.
#pragma once

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

extern char **environ;

namespace process {

inline std::string read_file(const std::string &path)
{
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

// The numeric fields of one JSON object's text (no nesting).
inline std::map<std::string, double> number_fields(const std::string &text)
{
    std::map<std::string, double> values;
    std::regex number_field("\"([a-z_]+)\": (-?[0-9.]+)");
    for (auto it = std::sregex_iterator(text.begin(), text.end(), number_field); it != std::sregex_iterator(); ++it)
        values[(*it)[1]] = std::stod((*it)[2]);
    return values;
}

// summary.json's totals: the numeric fields before its per_location list.
inline std::map<std::string, double> read_summary(const std::string &archive)
{
    std::string text = read_file(archive + "/summary.json");
    return number_fields(text.substr(0, text.find("\"per_location\"")));
}

// summary.json's per_location list, one object per line, in file order.
inline std::vector<std::map<std::string, double>> read_summary_locations(const std::string &archive)
{
    std::vector<std::map<std::string, double>> lines;
    std::string text = read_file(archive + "/summary.json");
    size_t list = text.find("\"per_location\"");
    if (list == std::string::npos)
        return lines;
    std::regex object("\\{[^{}]*\\}");
    for (auto it = std::sregex_iterator(text.begin() + long(list), text.end(), object); it != std::sregex_iterator(); ++it)
        lines.push_back(number_fields(it->str()));
    return lines;
}

// This process's environment without ADAPTRACE_*, the runtime's owner
// marker and LD_PRELOAD, then the given variables.
inline std::vector<std::string> clean_environment(const std::map<std::string, std::string> &settings)
{
    std::vector<std::string> env;
    for (char **entry = environ; *entry; entry++) {
        std::string variable(*entry);
        if (variable.rfind("ADAPTRACE_", 0) == 0 || variable.rfind("_ADAPTRACE_", 0) == 0 ||
            variable.rfind("LD_PRELOAD=", 0) == 0)
            continue;
        env.push_back(variable);
    }
    for (const auto &setting : settings)
        env.push_back(setting.first + "=" + setting.second);
    return env;
}

struct Result {
    int exit_status = -1;  // 128 + signal when killed
    std::string out;
    std::string err;
};

// Runs argv[0] (a path) in directory with env; its stdout and stderr go to
// output_prefix + ".stdout" / ".stderr" and are read back.
inline Result run(std::vector<std::string> argv, std::vector<std::string> env, const std::string &directory,
                  const std::string &output_prefix)
{
    std::vector<char *> argv_pointers, env_pointers;
    for (auto &arg : argv)
        argv_pointers.push_back(arg.data());
    argv_pointers.push_back(nullptr);
    for (auto &variable : env)
        env_pointers.push_back(variable.data());
    env_pointers.push_back(nullptr);
    const std::string out_path = output_prefix + ".stdout", err_path = output_prefix + ".stderr";
    pid_t child = fork();
    if (child == 0) {
        int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (out < 0 || err < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0 || chdir(directory.c_str()) != 0)
            _exit(126);
        execve(argv_pointers[0], argv_pointers.data(), env_pointers.data());
        _exit(127);
    }
    Result result;
    int status = 0;
    waitpid(child, &status, 0);
    result.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    result.out = read_file(out_path);
    result.err = read_file(err_path);
    return result;
}

}  // namespace process
