namespace CoapNet.Tests.Readme;

/// <summary>
/// The README is a front page: short, with headline figures that are quoted, never retyped, from the page of today's
/// figures (benchmarks/RESULTS.md's "At a glance"), so the two cannot disagree after either changes.
/// </summary>
public sealed class ReadmeFiguresTests
{
    private static readonly string Folder = Path.Combine(AppContext.BaseDirectory, "ReadmeCheck");

    [Fact]
    public void EveryFigureInTheReadmeIsQuotedFromTheResultsPage()
    {
        string readme = File.ReadAllText(Path.Combine(Folder, "README.md")).ReplaceLineEndings("\n");
        string results = File.ReadAllText(Path.Combine(Folder, "RESULTS.md")).ReplaceLineEndings("\n");
        HashSet<string> glance = [.. Rows(Section(results, "## At a glance\n")).Select(cells => cells[1])];

        List<string[]> figures = Rows(Section(readme, "## Figures\n"));

        figures.Should().HaveCountGreaterThanOrEqualTo(5, "the README shows the headline figures");
        foreach (string[] row in figures)
        {
            glance.Should().Contain(row[1], $"the README's figure for {row[0]} must be RESULTS.md's, word for word");
        }
    }

    [Fact]
    public void TheReadmeStaysAFrontPage()
    {
        File.ReadAllLines(Path.Combine(Folder, "README.md")).Should().HaveCountLessThanOrEqualTo(250, "the rest belongs in the guides under docs/");
    }

    private static string Section(string page, string heading)
    {
        string section = page[(page.IndexOf(heading, StringComparison.Ordinal) + heading.Length)..];
        int next = section.IndexOf("\n## ", StringComparison.Ordinal);
        return next < 0 ? section : section[..next];
    }

    // The body rows of the section's table, each split into its cells.
    private static List<string[]> Rows(string section)
    {
        List<string[]> rows = [];
        foreach (string line in section.Split('\n'))
        {
            if (line.StartsWith("| ", StringComparison.Ordinal) && !line.StartsWith("| area ", StringComparison.Ordinal))
            {
                rows.Add([.. line.Trim().Trim('|').Split(" | ").Select(cell => cell.Trim())]);
            }
        }

        return rows;
    }
}
