"""Plan stage (pure): config schemas and checks, engine versions, the RunPlan and what a resume still runs."""
