// cppwork target: `cppwork ROUNDS`. A CPU-bound C++ program of the ordinary kind, built -O2
// (tests/e2e/check_shares.c compares perch's shares on it with perf's): each round builds
// words, counts them in a std::unordered_map, sorts them, merges a std::map and runs a small
// dynamic-programming loop. A fixed amount of work, so two runs spend their time alike.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

static unsigned long long rng = 0x9e3779b97f4a7c15ULL;

static unsigned next_rand()
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return static_cast<unsigned>(rng >> 32);
}

__attribute__((noinline)) static std::vector<std::string> make_words(int n)
{
	static const char *const syll[] = { "ka", "lo", "mi", "ren", "tu", "sa", "vo", "ne" };
	std::vector<std::string> words;

	words.reserve(static_cast<size_t>(n));
	for (int i = 0; i < n; i++) {
		std::string w;
		int len = 1 + static_cast<int>(next_rand() % 4);

		for (int k = 0; k < len; k++)
			w += syll[next_rand() % 8];
		words.push_back(std::move(w));
	}
	return words;
}

__attribute__((noinline)) static size_t count_words(const std::vector<std::string> &words)
{
	std::unordered_map<std::string, int> counts;

	for (const auto &w : words)
		counts[w]++;
	return counts.size();
}

__attribute__((noinline)) static size_t sort_words(std::vector<std::string> words)
{
	std::sort(words.begin(), words.end());
	return static_cast<size_t>(std::unique(words.begin(), words.end()) - words.begin());
}

__attribute__((noinline)) static long merge_maps(const std::vector<std::string> &words)
{
	std::map<std::string, long> m;
	long sum = 0;

	for (size_t i = 0; i < words.size(); i++)
		m[words[i]] += static_cast<long>(i);
	for (const auto &kv : m)
		sum += kv.second % 97;
	return sum;
}

__attribute__((noinline)) static int edit_distance(const std::string &a, const std::string &b)
{
	std::vector<int> prev(b.size() + 1), cur(b.size() + 1);

	for (size_t j = 0; j <= b.size(); j++)
		prev[j] = static_cast<int>(j);
	for (size_t i = 1; i <= a.size(); i++) {
		cur[0] = static_cast<int>(i);
		for (size_t j = 1; j <= b.size(); j++)
			cur[j] = std::min({ prev[j] + 1, cur[j - 1] + 1,
					    prev[j - 1] + (a[i - 1] != b[j - 1]) });
		std::swap(prev, cur);
	}
	return prev[b.size()];
}

__attribute__((noinline)) static long distances(const std::vector<std::string> &words)
{
	long sum = 0;

	for (size_t i = 0; i + 1 < words.size() && i < 20000; i++)
		sum += edit_distance(words[i], words[i + 1]);
	return sum;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? std::atoi(argv[1]) : 10;
	long total = 0;

	if (rounds <= 0) {
		std::fprintf(stderr, "usage: cppwork ROUNDS\n");
		return 64;
	}
	for (int r = 0; r < rounds; r++) {
		std::vector<std::string> words = make_words(60000);

		total += static_cast<long>(count_words(words));
		total += static_cast<long>(sort_words(words));
		total += merge_maps(words);
		total += distances(words);
	}
	std::printf("cppwork %ld\n", total);
	return 0;
}
