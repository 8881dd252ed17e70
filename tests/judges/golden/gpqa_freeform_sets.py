"""Option sets for the free-form GPQA corpus: questions and four options in the style of GPQA Diamond.

Written for this project. Each set lists its options in the order one sample showed them (A, B, C, D),
plus short words a model uses to name an option ("the (R) alcohol"); several sets hold options that
are substrings or near copies of each other, the hard case for option-text matching.
"""

SETS = {
    "enal": dict(
        question="Identify the final product of the aldol sequence.",
        options=["2,4-bis(4-hydroxyphenyl)but-2-enal", "3-hydroxy-2,4-bis(4-hydroxyphenyl)butanal",
                 "4-(4-hydroxyphenyl)but-3-enal", "2,4-diphenylbut-3-enal"],
    ),
    "peaks": dict(
        question="How many peaks appear in the 1H NMR spectrum of the final product?",
        options=["2", "4", "8", "12"],
    ),
    "peaks_words": dict(
        question="How many chemically distinct hydrogen signals does the product show?",
        options=["2 peaks", "3 peaks", "6 peaks", "4 peaks"],
    ),
    "energy": dict(
        question="Estimate the energy threshold of the gamma rays.",
        options=["$2.6 \\times 10^{5}$ GeV", "$3.9 \\times 10^{5}$ GeV", "$1.8 \\times 10^{5}$ GeV", "$9.5 \\times 10^{4}$ GeV"],
    ),
    "immuno": dict(
        question="Which process explains the variable heavy chain changes in the proliferating B cells?",
        options=["class switching recombination", "VDJ recombination", "complement activation", "somatic hypermutation"],
    ),
    "stereo": dict(
        question="What is the configuration of the major product?",
        options=["(1R,2S)-2-methylcyclohexan-1-ol", "(1S,2S)-2-methylcyclohexan-1-ol",
                 "(1R,2R)-2-methylcyclohexan-1-ol", "(1S,2R)-2-methylcyclohexan-1-ol"],
    ),
    "reagents": dict(
        question="Choose the reagents A and B for the two steps.",
        options=["A = TsOH, B = H2O2", "A = H3O+, B = NaBH4", "A = TsOH, B = NaBH4", "A = H3O+, B = H2O2"],
    ),
    "mass": dict(
        question="What is the invariant mass squared of the system?",
        options=["$M^2 = (E_1+E_2)^2 - (p_1+p_2)^2$", "$M^2 = m_1^2 + m_2^2$", "$M^2 = (m_1+m_2)^2$", "$M^2 = 2E_1E_2$"],
    ),
    "substring": dict(
        question="Which solvents dissolve the polymer at room temperature?",
        options=["toluene", "toluene and chloroform", "chloroform", "neither toluene nor chloroform"],
    ),
    "spin": dict(
        question="What is the expectation value of the spin along y?",
        options=["$-12\\hbar/25$", "$12\\hbar/25$", "$25\\hbar/2$", "$-25\\hbar/2$"],
    ),
    "orbit": dict(
        question="By what factor is the orbital period of planet 2 longer than that of planet 1?",
        options=["~ 1.40", "~ 1.96", "~ 0.85", "~ 0.36"],
    ),
    "genetics": dict(
        question="Which molecular mechanism explains the milder phenotype of the dominant-negative mutant?",
        options=["loss of protein dimerization and wild-type phenotype",
                 "protein degradation and loss-of-function of the wild-type allele",
                 "change of protein conformation and gain-of-function phenotype",
                 "protein aggregation and loss-of-function phenotype"],
    ),
    "astro": dict(
        question="Which of the following stars can be detected with both spectrographs?",
        options=["Star 1 and Star 2", "Star 3 and Star 5", "Star 4 and Star 5", "Star 2 and Star 3"],
    ),
    "ph": dict(
        question="What is the pH of the solution at 25% titration?",
        options=["4.57; 6.92", "3.17; 6.73", "4.26; 8.52", "4.73; 7.00"],
    ),
}
